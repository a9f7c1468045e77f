"""`backlog`: triage the open issues nobody labelled, or find the duplicates already open."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from issue_assistant.commands.args import (
    APPLY_OFFLINE,
    add_config_arguments,
    add_repository_argument,
    moment,
)
from issue_assistant.errors import UserError

HELP = (
    "Propose labels for the open issues nobody labelled, as of now, at most --limit per run "
    "(dry run unless --apply: the proposals go to a Markdown report); --duplicates: the groups "
    "of open issues that report the same problem."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_repository_argument(
        parser, positional=False, help="the repository on GitHub (default: $GH_REPO)"
    )
    parser.add_argument(
        "-L",
        "--limit",
        type=int,
        metavar="N",
        help="proposals this run at most (default: [backlog] limit, 10)",
    )
    parser.add_argument(
        "--order", choices=("oldest", "newest"), help="default: [backlog] order (oldest)"
    )
    parser.add_argument(
        "--apply", action="store_true", help="post the proposals (default: dry run)"
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="write nothing (the default without --apply)"
    )
    parser.add_argument(
        "--duplicates",
        action="store_true",
        help="find groups of open duplicates instead and write one Markdown report",
    )
    parser.add_argument(
        "--post",
        action="store_true",
        help="with --duplicates: one pending comment on each newer issue of a group, proposing "
        "the original (written only with --apply)",
    )
    parser.add_argument(
        "--report",
        metavar="PATH",
        help="the Markdown report (default: ./OWNER-REPO-backlog.md, "
        "./OWNER-REPO-duplicates.md with --duplicates)",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="overwrite the report of an earlier run (default: a new name beside it, or an "
        "error for a --report that exists)",
    )
    parser.add_argument(
        "--snapshot",
        metavar="FILE",
        help="with --duplicates: work offline from a snapshot (the open issues of --as-of)",
    )
    parser.add_argument(
        "--as-of", type=moment, metavar="TIME", help="with --snapshot: the moment (ISO 8601)"
    )
    parser.add_argument("--engine", metavar="NAME", help="engine (default: [engine] name)")
    parser.add_argument("--model", metavar="M", help="model for the engine")
    parser.add_argument(
        "--cache-dir",
        metavar="DIR",
        help="where the index and the backlog's state are kept (default: $ISSUE_ASSISTANT_CACHE, "
        "then [index] cache_dir)",
    )
    parser.add_argument("--json", action="store_true", help="print the run as JSON")
    add_config_arguments(parser)


def _check(args: argparse.Namespace) -> None:
    if args.apply and args.dry_run:
        raise UserError("--apply and --dry-run contradict each other")
    if args.limit is not None and args.limit < 1:
        raise UserError(f"--limit must be at least 1, not {args.limit}")
    if args.post and not args.duplicates:
        raise UserError("--post goes with --duplicates")
    if args.snapshot and not args.duplicates:
        raise UserError("--snapshot goes with --duplicates (the triage runs live: -R OWNER/REPO)")
    if args.snapshot and args.post:
        raise UserError("--post needs the live repository (-R OWNER/REPO), not --snapshot")
    if args.as_of is not None and not args.snapshot:
        raise UserError("--as-of goes with --snapshot")
    if args.apply and args.snapshot:
        raise UserError(APPLY_OFFLINE)
    if args.apply and args.duplicates and not args.post:
        raise UserError("--apply with --duplicates writes nothing without --post")


def _report_path(args: argparse.Namespace, full_name: str, kind: str) -> Path:
    if args.report:
        return Path(args.report)
    return Path.cwd() / f"{full_name.replace('/', '-')}-{kind}.md"


def run(args: argparse.Namespace) -> int:
    from issue_assistant.commands.common import cache_dir, cli_writes, engine_name, load_configs
    from issue_assistant.settings import current

    _check(args)
    labels, config = load_configs(args)
    writes = cli_writes(args.apply, config)
    if args.snapshot:
        from issue_assistant.backlog.duplicates import duplicates_offline
        from issue_assistant.commands.common import warn_after_fetch
        from issue_assistant.tracker.snapshot import read_repository

        warn_after_fetch(args.as_of, read_repository(Path(args.snapshot)))
        out = duplicates_offline(args.snapshot, labels, config, cache_dir(args, config), args.as_of)
        path = _report_path(args, out.repository, "duplicates")
        return _finish(args, out.markdown, out.outputs(), path)
    from issue_assistant.live import connect

    full_name = current().require_repository(args.repo)
    tracker = connect(full_name, bot_login=config.approval.bot_login, writes=writes)
    if args.duplicates:
        from issue_assistant.backlog.duplicates import duplicates_live

        out = duplicates_live(
            tracker,
            labels,
            config,
            writes=writes,  # type: ignore[arg-type]
            post=args.post,
            limit=args.limit,
            cache_dir=cache_dir(args, config),
        )
        return _finish(
            args, out.markdown, out.outputs(), _report_path(args, full_name, "duplicates")
        )
    from issue_assistant.backlog.report import outputs, render_run
    from issue_assistant.backlog.run import run_backlog

    result = run_backlog(
        tracker,
        labels,
        config,
        writes=writes,  # type: ignore[arg-type]
        limit=args.limit,
        order=args.order,
        engine_name=engine_name(args),
        cache_dir=cache_dir(args, config),
    )
    text = render_run(result, current().api_url)
    status = _finish(args, text, outputs(result), _report_path(args, full_name, "backlog"))
    return 1 if result.failed else status


def _finish(args: argparse.Namespace, markdown: str, data: dict, path: Path) -> int:
    from issue_assistant.backlog.report import write_report
    from issue_assistant.commands.common import unused_report

    path = unused_report(path, chosen=bool(args.report), force=args.force)
    write_report(path, markdown)
    if args.json:
        print(json.dumps({**data, "report": str(path)}, indent=2, sort_keys=True, default=str))
    else:
        print(path)
        if data.get("stopped"):
            print(f"issue-assistant: backlog: {data['stopped']}", file=sys.stderr)
    return 0


__all__ = ["HELP", "add_arguments", "run"]
