"""`evaluate`: replay closed issues as they were when opened and grade the engine against what
maintainers did; `evaluate merge FILES...` joins shards' results. Nothing is written to GitHub.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from issue_assistant.commands.args import (
    add_checkout_argument,
    add_config_arguments,
    add_json_argument,
    add_strategy_argument,
)
from issue_assistant.errors import UserError
from issue_assistant.evaluate.limits import DEFAULT_ISSUES, MAX_ISSUES

if TYPE_CHECKING:
    from issue_assistant.config import Config, LabelsConfig
    from issue_assistant.tracker.base import Tracker

HELP = (
    "Measure the assistant on closed issues replayed as they were when opened, against what "
    "maintainers did; writes OWNER-REPO-accuracy.md beside the checkout. "
    "`evaluate merge FILES...` joins shards' results."
)

log = logging.getLogger(__name__)

# Issues per label-model bucket: a 200-issue run fits four models.
BUCKET = 50


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "words",
        nargs="*",
        metavar="merge FILES",
        help="`merge` and the shards' results files (.jsonl) to join into one report",
    )
    parser.add_argument(
        "--issues",
        type=int,
        default=DEFAULT_ISSUES,
        metavar="N",
        help=f"how many issues (default {DEFAULT_ISSUES}, at most {MAX_ISSUES})",
    )
    parser.add_argument("--engine", metavar="NAME", help="engine (default: [engine] name)")
    parser.add_argument("--model", metavar="M", help="model for the engine")
    add_strategy_argument(parser)
    parser.add_argument(
        "--report",
        metavar="PATH",
        help="the report (default: ../OWNER-REPO-accuracy.md beside the checkout; must be "
        "outside it). The results go beside it as .jsonl",
    )
    parser.add_argument(
        "--snapshot", metavar="FILE", help="work offline from a snapshot instead of GitHub"
    )
    parser.add_argument(
        "--repo", metavar="OWNER/REPO", help="the repository on GitHub (default: $GH_REPO)"
    )
    parser.add_argument("--jobs", type=int, default=1, metavar="N", help="issues in parallel")
    parser.add_argument(
        "--shard", metavar="I/N", help="only the I-th of N shares of the selection (1 <= I <= N)"
    )
    parser.add_argument(
        "--resume", action="store_true", help="continue an interrupted run (skip issues done)"
    )
    parser.add_argument(
        "--cache-dir",
        metavar="DIR",
        help="where the index is kept (default: $ISSUE_ASSISTANT_CACHE, then [index] cache_dir)",
    )
    parser.add_argument(
        "--backlog",
        action="store_true",
        help="replay the backlog case instead: issues labelled late, analyzed just before the "
        "label, beside the same issues a minute after opening (OWNER-REPO-backlog-accuracy.md)",
    )
    add_json_argument(parser, "a summary (the report's path and its measures)")
    add_config_arguments(parser)
    add_checkout_argument(parser)


def _tracker(
    args: argparse.Namespace, labels: LabelsConfig, config: Config
) -> tuple[Tracker, str, int | None]:
    """The snapshot, or GitHub (read once into memory) for --repo / $GH_REPO.

    Returns the tracker, a line on its source, and how many closed issues were examined live.
    """
    from issue_assistant.settings import current
    from issue_assistant.tracker.snapshot import read_snapshot

    if args.snapshot:
        snapshot = read_snapshot(args.snapshot)
        return snapshot, f"snapshot {Path(args.snapshot).name}", None
    settings = current()
    if not (args.repo or settings.repository):
        raise UserError("no repository: set GH_REPO=OWNER/REPO, or use --repo or --snapshot FILE")
    full_name = settings.require_repository(args.repo)
    token = settings.github_token or ""
    try:
        from issue_assistant.tracker.github import GitHubTracker
    except ImportError:
        raise UserError("reading GitHub is not available in this version; use --snapshot") from None
    from issue_assistant.evaluate.live import read_live

    gh = GitHubTracker(full_name, token, settings.api_url)
    tracker, examined = read_live(gh, labels, config.approval.bot_login, args.issues)
    return tracker, "GitHub, read-only", examined


def _merge(files: list[str], report: str | None, as_json: bool = False) -> int:
    from issue_assistant.evaluate.report import (
        checkout_root,
        default_report_path,
        ensure_outside,
        write_report,
    )
    from issue_assistant.evaluate.results import merge

    paths = [Path(f) for f in files]
    header, results = merge(paths)
    root = checkout_root()
    out = Path(report) if report else default_report_path(root, header.repository, header.shard)
    out = ensure_outside(out, root)
    write_report(out, header, results)
    print(_summary(out, header, results) if as_json else out)
    return 0


def _summary(report: Path, header: object, results: list) -> str:  # noqa: ANN001
    """`--json`: the report's path, the run's header and the measures, on one line."""
    from issue_assistant.evaluate.metrics import measure
    from issue_assistant.evaluate.report import results_path

    def plain(value: object) -> object:
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return dataclasses.asdict(value)
        return value.model_dump(mode="json") if hasattr(value, "model_dump") else value

    return json.dumps(
        {
            "report": str(report),
            "results": str(results_path(report)),
            "header": plain(header),
            "measures": plain(measure(results)),
        },
        default=str,
    )


def run(args: argparse.Namespace) -> int:
    from issue_assistant.commands.common import cache_dir, engine_name, load_configs
    from issue_assistant.evaluate.report import (
        checkout_root,
        default_report_path,
        ensure_outside,
        results_path,
        write_report,
    )
    from issue_assistant.evaluate.results import RunHeader, open_results, read_results
    from issue_assistant.evaluate.runner import Evaluator, progress_for, run_all
    from issue_assistant.evaluate.selection import parse_shard, select, shard
    from issue_assistant.learn.store import bucket_cutoffs
    from issue_assistant.pipeline import engines_for, open_index, prepare

    if args.words:
        if args.words[0] != "merge":
            raise UserError(f"unknown evaluate action {args.words[0]!r} (did you mean `merge`?)")
        return _merge(args.words[1:], args.report, args.json)
    if args.jobs < 1:
        raise UserError("--jobs must be at least 1")
    shard_of = parse_shard(args.shard) if args.shard else None
    root = checkout_root()
    if args.report:
        ensure_outside(Path(args.report), root)
    labels, config = load_configs(args, root)  # with --model and --checkout
    config = config.with_engine(strategy=args.strategy)
    if not 1 <= args.issues <= MAX_ISSUES:
        raise UserError(f"--issues must be between 1 and {MAX_ISSUES}, not {args.issues}")
    prepare(*engines_for(config, labels, engine_name(args)))  # before the first issue: exit 2 here
    tracker, source, examined = _tracker(args, labels, config)
    full_name = tracker.repository.full_name
    shard_text = f"{shard_of[0]}/{shard_of[1]}" if shard_of else None
    report = ensure_outside(
        Path(args.report) if args.report else default_report_path(root, full_name, shard_text),
        root,
    )
    if args.backlog:
        from issue_assistant.commands.evaluate_backlog import backlog_evaluation

        return backlog_evaluation(args, tracker, labels, config, report, engine_name(args))
    selection = select(tracker, labels, config.approval.bot_login, args.issues, examined=examined)
    items = shard(selection.issues, *shard_of) if shard_of else list(enumerate(selection.issues))
    index = open_index(tracker, cache_dir(args, config), embeddings=config.index.embeddings)
    # Label models in time buckets over the whole selection (shards and resumed runs share them).
    cutoffs = bucket_cutoffs([i.created_at for i in selection.issues], BUCKET)
    evaluator = Evaluator(
        tracker,
        index=index,
        labels=labels,
        config=config,
        engine_name=engine_name(args),
        cutoffs=cutoffs,
    )
    header = RunHeader(
        repository=full_name,
        engine=evaluator.engine.name,
        model=evaluator.engine.model,
        strategy=evaluator.engine.strategy,
        day=datetime.now(UTC).date(),
        source=source,
        requested=args.issues,
        selected=len(items),
        window=selection.window,
        examined=selection.examined,
        qualified=selection.qualified,
        skipped_assistant=selection.skipped_assistant,
        shard=shard_text,
    )
    jsonl = results_path(report)
    writer, header, done = open_results(jsonl, header, args.resume)
    todo = [(p, issue) for p, issue in items if issue.number not in done]
    log.info(
        "evaluate: %d issues selected (%d to do) on %s with %s; results in %s",
        len(items),
        len(todo),
        full_name,
        header.engine,
        jsonl,
    )
    interrupted = False
    try:
        run_all(
            evaluator,
            todo,
            jobs=args.jobs,
            on_result=writer.write,
            progress=progress_for(sys.stderr),
            done=len(items) - len(todo),
        )
    except KeyboardInterrupt:
        interrupted = True
    finally:
        writer.close()
    header, results, _ = read_results(jsonl)
    wanted = {issue.number for _, issue in items}
    kept = [r for n, r in results.items() if n in wanted]
    write_report(report, header, kept)
    print(_summary(report, header, kept) if args.json else report)
    if interrupted:
        print(f"issue-assistant: interrupted; continue with --resume ({jsonl})", file=sys.stderr)
        return 130
    return 0
