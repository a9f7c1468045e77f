"""`evaluate`: replay closed issues as they were when opened and grade the engine against what
maintainers did; `evaluate merge FILES...` joins shards' results. Nothing is written to GitHub.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from datetime import UTC, datetime
from pathlib import Path

from issue_assistant.commands.common import (
    add_checkout_argument,
    add_config_arguments,
    with_checkout,
)
from issue_assistant.config import STRATEGIES, Config, LabelsConfig, load_both
from issue_assistant.errors import UserError
from issue_assistant.evaluate.report import (
    checkout_root,
    default_report_path,
    ensure_outside,
    results_path,
    write_report,
)
from issue_assistant.evaluate.results import RunHeader, merge, open_results, read_results
from issue_assistant.evaluate.runner import Evaluator, progress_for, run_all
from issue_assistant.evaluate.selection import (
    DEFAULT_ISSUES,
    MAX_ISSUES,
    parse_shard,
    select,
    shard,
)
from issue_assistant.learn.store import bucket_cutoffs
from issue_assistant.pipeline import engines_for, open_index, prepare
from issue_assistant.tracker.base import Tracker
from issue_assistant.tracker.snapshot import read_snapshot

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
    parser.add_argument(
        "--strategy",
        choices=STRATEGIES,
        help="zero-shot, rag or agent (default: [engine] strategy, else the engine's own)",
    )
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
        help="where the index is kept (default: [index] cache_dir of config.toml)",
    )
    add_config_arguments(parser)
    add_checkout_argument(parser)


def _tracker(
    args: argparse.Namespace, labels: LabelsConfig, config: Config
) -> tuple[Tracker, str, int | None]:
    """The snapshot, or GitHub (read once into memory) for --repo / $GH_REPO.

    Returns the tracker, a line on its source, and how many closed issues were examined live.
    """
    if args.snapshot:
        snapshot = read_snapshot(args.snapshot)
        return snapshot, f"snapshot {Path(args.snapshot).name}", None
    full_name = args.repo or os.environ.get("GH_REPO")
    if not full_name:
        raise UserError("no repository: set GH_REPO=OWNER/REPO, or use --repo or --snapshot FILE")
    token = os.environ.get("GITHUB_TOKEN") or os.environ.get("GH_TOKEN") or ""
    try:
        from issue_assistant.tracker.github import GitHubTracker
    except ImportError:
        raise UserError("reading GitHub is not available in this version; use --snapshot") from None
    from issue_assistant.evaluate.live import read_live

    gh = GitHubTracker(full_name, token, os.environ.get("GITHUB_API_URL"))
    tracker, examined = read_live(gh, labels, config.approval.bot_login, args.issues)
    return tracker, "GitHub, read-only", examined


def _merge(files: list[str], report: str | None) -> int:
    paths = [Path(f) for f in files]
    header, results = merge(paths)
    root = checkout_root()
    out = Path(report) if report else default_report_path(root, header.repository, header.shard)
    out = ensure_outside(out, root)
    write_report(out, header, results)
    print(out)
    return 0


def run(args: argparse.Namespace) -> int:
    if args.words:
        if args.words[0] != "merge":
            raise UserError(f"unknown evaluate action {args.words[0]!r} (did you mean `merge`?)")
        return _merge(args.words[1:], args.report)
    if args.jobs < 1:
        raise UserError("--jobs must be at least 1")
    shard_of = parse_shard(args.shard) if args.shard else None
    root = checkout_root()
    if args.report:
        ensure_outside(Path(args.report), root)
    labels, config = load_both(args.labels, args.config, root)
    config = with_checkout(args, config)
    config = config.with_engine(model=args.model, strategy=args.strategy)
    if not 1 <= args.issues <= MAX_ISSUES:
        raise UserError(f"--issues must be between 1 and {MAX_ISSUES}, not {args.issues}")
    prepare(*engines_for(config, labels, args.engine))  # before the first issue: exit 2 here
    tracker, source, examined = _tracker(args, labels, config)
    full_name = tracker.repository.full_name
    shard_text = f"{shard_of[0]}/{shard_of[1]}" if shard_of else None
    report = ensure_outside(
        Path(args.report) if args.report else default_report_path(root, full_name, shard_text),
        root,
    )
    selection = select(tracker, labels, config.approval.bot_login, args.issues, examined=examined)
    items = shard(selection.issues, *shard_of) if shard_of else list(enumerate(selection.issues))
    cache = args.cache_dir or os.environ.get("ISSUE_ASSISTANT_CACHE") or config.index.cache_dir
    index = open_index(tracker, Path(cache), embeddings=config.index.embeddings)
    # Label models in time buckets over the whole selection (shards and resumed runs share them).
    cutoffs = bucket_cutoffs([i.created_at for i in selection.issues], BUCKET)
    evaluator = Evaluator(
        tracker,
        index=index,
        labels=labels,
        config=config,
        engine_name=args.engine,
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
    write_report(report, header, [r for n, r in results.items() if n in wanted])
    print(report)
    if interrupted:
        print(f"issue-assistant: interrupted; continue with --resume ({jsonl})", file=sys.stderr)
        return 130
    return 0
