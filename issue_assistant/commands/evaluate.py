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
    add_limit_argument,
    add_repository_argument,
    add_strategy_argument,
    limit_of,
)
from issue_assistant.errors import NO_SOURCE, UserError
from issue_assistant.evaluate.limits import DEFAULT_ISSUES, MAX_ISSUES

if TYPE_CHECKING:
    from issue_assistant.config.labels import LabelsConfig
    from issue_assistant.config.sections import Config
    from issue_assistant.evaluate.results import RunHeader
    from issue_assistant.tracker.base import Tracker

HELP = (
    "Measure the assistant on closed issues replayed as they were when opened, against what "
    "maintainers did; writes OWNER-REPO-accuracy.md in the current folder. "
    "`evaluate merge FILES...` joins shards' results."
)

log = logging.getLogger(__name__)

# The files a run writes beside its report (results, what was read from GitHub, a backup).
BESIDE = (".jsonl", ".github.jsonl.gz", ".jsonl.bak")
# Issues per label-model bucket: a 200-issue run fits four models.
BUCKET = 50


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "words",
        nargs="*",
        metavar="merge FILES",
        help="`merge` and the shards' results files (.jsonl) to join into one report",
    )
    add_limit_argument(
        parser, DEFAULT_ISSUES, f"how many issues (default {DEFAULT_ISSUES}, at most {MAX_ISSUES})"
    )
    parser.add_argument("--engine", metavar="NAME", help="engine (default: [engine] name)")
    parser.add_argument("--model", metavar="M", help="model for the engine")
    add_strategy_argument(parser)
    parser.add_argument(
        "--report",
        metavar="PATH",
        help="the report (default: ./OWNER-REPO-accuracy.md; never inside the checkout the "
        "engine reads). The results go beside it as .jsonl",
    )
    parser.add_argument(
        "--snapshot", metavar="FILE", help="work offline from a snapshot instead of GitHub"
    )
    add_repository_argument(
        parser, positional=False, help="the repository on GitHub (default: $GH_REPO)"
    )
    parser.add_argument("--jobs", type=int, default=1, metavar="N", help="issues in parallel")
    parser.add_argument(
        "--shard", metavar="I/N", help="only the I-th of N shares of the selection (1 <= I <= N)"
    )
    parser.add_argument(
        "--resume",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="continue an interrupted run: the issues done are kept and, with -R, GitHub is not "
        "read again (default: on when the last run with these settings was interrupted, as "
        "for snapshot); --no-resume starts over",
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
    parser.add_argument(
        "--force",
        action="store_true",
        help="overwrite the report of an earlier run (default: a new name beside it, or an "
        "error for a --report that exists)",
    )
    add_json_argument(parser, "a summary (the report's path and its measures)")
    add_config_arguments(parser)
    add_checkout_argument(parser)


def _tracker(
    args: argparse.Namespace, labels: LabelsConfig, config: Config, saved: Path | None = None
) -> tuple[Tracker, str, int | None]:
    """The snapshot, or GitHub (read once into memory) for -R/--repo / $GH_REPO; what was read
    from GitHub is kept in `saved` (a snapshot), which a resumed run reads instead.

    Returns the tracker, a line on its source, and how many closed issues were examined live.
    """
    from issue_assistant.config.weak_spots import warn_absent_labels
    from issue_assistant.settings import current
    from issue_assistant.tracker.snapshot import read_snapshot, write_snapshot

    if args.snapshot:
        snapshot = read_snapshot(args.snapshot)
        warn_absent_labels(labels, snapshot.repository)
        return snapshot, f"snapshot {Path(args.snapshot).name}", None
    if not (args.repo or current().repository):
        raise UserError(NO_SOURCE)
    from issue_assistant.commands.common import github_reader
    from issue_assistant.evaluate.live import read_live

    gh = github_reader(args.repo)
    tracker, examined = read_live(gh, labels, config.approval.bot_login, args.limit)
    warn_absent_labels(labels, tracker.repository)
    if saved is not None:
        extra = {"releases": tracker.releases() or [], "discussions": tracker.discussions() or []}
        write_snapshot(saved, tracker.repository, tracker.all_issues(), **extra)
    return tracker, "GitHub, read-only", examined


def saved_read(report: Path) -> Path:
    """Where a live run keeps what it read from GitHub until it completes (for --resume)."""
    return report.with_name(report.stem + ".github.jsonl.gz")


def _interrupted(jsonl: Path, probe: RunHeader) -> bool:
    """Whether `jsonl` holds an unfinished run with the same settings (resume's default)."""
    from issue_assistant.evaluate.results import read_results

    if not jsonl.is_file():
        return False
    try:
        old, done, _ = read_results(jsonl)
    except UserError:
        return False
    return old.same_run(probe) and len(done) < old.selected


def _merge(files: list[str], report: str | None, as_json: bool = False, force: bool = False) -> int:
    from issue_assistant.commands.common import unused_report
    from issue_assistant.config.sections import Config
    from issue_assistant.evaluate.report import results_path, write_report
    from issue_assistant.evaluate.results import merge

    paths = [Path(f) for f in files]
    header, results = merge(paths)
    args = argparse.Namespace(report=report)
    out = _report_path(args, Config(), header.repository, header.shard)  # where run puts it
    if [p.resolve() for p in paths] != [results_path(out).resolve()]:  # not a re-render
        out = unused_report(out, chosen=bool(report), force=force)
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


def _clone(config: Config, tracker: Tracker):  # noqa: ANN202 - a CloneHistory or None
    """With a checkout that is a clone with its history: each issue's code as it was then and
    the fixes its merge commits show (`evaluate.clone`); else None (the checkout as it is)."""
    from issue_assistant.evaluate.clone import CloneHistory, has_history
    from issue_assistant.likely.checkout import checkout_for

    if config.code.likely_files <= 0:
        return None
    root = checkout_for(config.code.checkout, tracker.repository.full_name)
    if root is None or not has_history(root):
        return None
    clone = CloneHistory(
        root, tracker, max_file_kb=config.code.max_file_kb, max_files=config.code.max_files
    )
    log.info(
        "evaluate: likely files from %s as it was when each issue was opened; %d fixes joined",
        root,
        len(clone.fixes),
    )
    return clone


def _report_path(args: argparse.Namespace, config: Config, full_name: str, shard: str | None):  # noqa: ANN202
    """--report, else OWNER-REPO-accuracy.md in the current folder; never inside the checkout
    the engine reads (it would find the answers there): the default then goes beside it."""
    from issue_assistant.evaluate.report import default_report_path, ensure_outside
    from issue_assistant.likely.checkout import checkout_for

    checkout = checkout_for(config.code.checkout, full_name)
    if args.report:
        return ensure_outside(Path(args.report), checkout) if checkout else Path(args.report)
    report = default_report_path(Path.cwd(), full_name, shard).absolute()
    if checkout is not None and report.resolve().is_relative_to(checkout.resolve()):
        report = default_report_path(checkout.resolve().parent, full_name, shard)
        log.warning("the current folder is in the checkout the engine reads: report in %s", report)
    return report


def run(args: argparse.Namespace) -> int:
    from issue_assistant.commands.common import (
        cache_dir,
        engine_name,
        load_configs,
        unused_report,
    )
    from issue_assistant.evaluate.report import checkout_root, results_path, write_report
    from issue_assistant.evaluate.results import RunHeader, open_results, read_results
    from issue_assistant.evaluate.runner import Evaluator, run_all
    from issue_assistant.evaluate.selection import parse_shard, select, shard
    from issue_assistant.index.local import open_index
    from issue_assistant.learn.store import bucket_cutoffs
    from issue_assistant.pipeline import check_engines, engines_for
    from issue_assistant.settings import current
    from issue_assistant.tracker.snapshot import read_repository, read_snapshot

    if args.words:
        if args.words[0] != "merge":
            raise UserError(f"unknown evaluate action {args.words[0]!r} (did you mean `merge`?)")
        return _merge(args.words[1:], args.report, args.json, args.force)
    if args.jobs < 1:
        raise UserError("--jobs must be at least 1")
    args.limit = limit_of(args)
    if not 1 <= args.limit <= MAX_ISSUES:
        raise UserError(f"--limit must be between 1 and {MAX_ISSUES}, not {args.limit}")
    shard_of = parse_shard(args.shard) if args.shard else None
    labels, config = load_configs(args, checkout_root())  # with --model and --checkout
    config = config.with_engine(strategy=args.strategy)
    engine, fallback = engines_for(config, labels, engine_name(args))
    check_engines(engine, fallback)  # before the first issue: exit 2 here
    if args.snapshot:
        full_name = read_repository(args.snapshot).full_name
    elif args.repo or current().repository:
        full_name = current().require_repository(args.repo)
    else:
        raise UserError(NO_SOURCE)
    shard_text = f"{shard_of[0]}/{shard_of[1]}" if shard_of else None
    report = _report_path(args, config, full_name, shard_text)
    if args.backlog:
        from issue_assistant.commands.evaluate_backlog import backlog_evaluation

        tracker = _tracker(args, labels, config)[0]
        return backlog_evaluation(args, tracker, labels, config, report, engine_name(args))
    jsonl, saved = results_path(report), saved_read(report)
    probe = RunHeader(
        repository=full_name,
        engine=engine.name,
        model=engine.model,
        strategy=engine.strategy,
        vectors=config.index.vectors,
        day=datetime.now(UTC).date(),
        requested=args.limit,
        selected=0,
        shard=shard_text,
    )
    interrupted = _interrupted(jsonl, probe)
    resume = interrupted if args.resume is None else args.resume
    if not resume and not interrupted:  # (--no-resume starts an interrupted run over in place)
        report = unused_report(report, chosen=bool(args.report), force=args.force, beside=BESIDE)
        jsonl, saved = results_path(report), saved_read(report)
    if resume and not args.snapshot and saved.is_file():
        # What the interrupted run read from GitHub: the same issues, no listing again.
        old = read_results(jsonl)[0]
        tracker, source, examined = read_snapshot(saved), old.source, old.examined
        log.info("resuming from %s (GitHub is not read again)", saved)
    else:
        tracker, source, examined = _tracker(args, labels, config, None if args.snapshot else saved)
    selection = select(tracker, labels, config.approval.bot_login, args.limit, examined=examined)
    items = shard(selection.issues, *shard_of) if shard_of else list(enumerate(selection.issues))
    index = open_index(tracker, cache_dir(args, config), vectors=config.index.vectors)
    # Label models in time buckets over the whole selection (shards and resumed runs share them).
    cutoffs = bucket_cutoffs([i.created_at for i in selection.issues], BUCKET)
    evaluator = Evaluator(
        tracker,
        index=index,
        labels=labels,
        config=config,
        engine_name=engine_name(args),
        cutoffs=cutoffs,
        clone=_clone(config, tracker),
        again=selection.again,
    )
    header = probe.model_copy(
        update={
            "engine": evaluator.engine.name,
            "model": evaluator.engine.model,
            "strategy": evaluator.engine.strategy,
            "source": source,
            "selected": len(items),
            "window": selection.window,
            "examined": selection.examined,
            "qualified": selection.qualified,
            "skipped_assistant": selection.skipped_assistant,
            "not_qualified": selection.not_qualified,
        }
    )
    writer, header, done = open_results(jsonl, header, resume)
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
        print(
            f"issue-assistant: interrupted after {len(kept)} of {len(items)} issues (kept in "
            f"{jsonl}); run the same command again to resume, --no-resume to start over",
            file=sys.stderr,
        )
        return 130
    saved.unlink(missing_ok=True)
    return 0
