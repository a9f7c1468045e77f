"""`analyze`: the comment the assistant would post for an issue, as it was just after opening."""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from datetime import timedelta
from pathlib import Path

from issue_assistant.commands.args import (
    APPLY_OFFLINE,
    add_checkout_argument,
    add_config_arguments,
    add_repository_argument,
    add_snapshot_argument,
    add_strategy_argument,
    deprecated,
    issue_number,
)
from issue_assistant.errors import UserError

HELP = (
    "Print the comment the assistant would post for an issue (offline on a snapshot with "
    "--snapshot FILE --issue N, or live with -R OWNER/REPO --issue N)."
)
_LIVE = re.compile(r"^([\w.-]+/[\w.-]+)#(\d+)$")
MAX_MINUTES = 60 * 24 * 366 * 30  # thirty years after the issue was opened


def check_minutes(value: float) -> float:
    """`--minutes`: a finite number of minutes, from 0 (the moment it was opened) to 30 years."""
    if not math.isfinite(value) or not 0 <= value <= MAX_MINUTES:
        raise UserError(
            f"--minutes must be a number from 0 to {MAX_MINUTES} (minutes after the issue "
            f"was opened), not {value!r}"
        )
    return value


def check_directory(path: str) -> None:
    """`--context-dir`: a directory, or a path where one can be made."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise UserError("--context-dir must be a directory, and this is a file", where=path)
    parent = next((q for q in p.absolute().parents if q.exists()), None)
    if not p.exists() and parent is not None and not parent.is_dir():
        raise UserError(f"--context-dir cannot be made under the file {parent}", where=path)


def _live_target(args: argparse.Namespace) -> tuple[str, int] | None:
    """(OWNER/REPO, N) for a live analysis: `-R OWNER/REPO --issue N`, or the deprecated
    `OWNER/REPO#N`; None for a snapshot."""
    if args.target:
        match = _LIVE.match(args.target)
        if not match:
            raise UserError(f"expected OWNER/REPO#N, got {args.target!r}")
        deprecated(
            f"`analyze {args.target}`", f"`analyze -R {match.group(1)} --issue {match.group(2)}`"
        )
        return match.group(1), int(match.group(2))
    if args.repo and not args.snapshot:
        from issue_assistant.settings import current

        if args.issue is None:
            raise UserError("give the issue: -R OWNER/REPO --issue N")
        return current().require_repository(args.repo), args.issue
    return None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("target", nargs="?", help=argparse.SUPPRESS)  # OWNER/REPO#N, deprecated
    add_repository_argument(
        parser, positional=False, help="live: the repository on GitHub (default: $GH_REPO)"
    )
    add_snapshot_argument(parser, required=False)
    parser.add_argument(
        "--issue", type=issue_number, metavar="N", help="the issue (in the snapshot, or live)"
    )
    parser.add_argument("--engine", metavar="NAME", help="engine (default: [engine] name)")
    parser.add_argument("--model", metavar="M", help="model for the engine")
    add_strategy_argument(parser)
    parser.add_argument("--json", action="store_true", help="print the decision as JSON")
    parser.add_argument(
        "--minutes",
        type=float,
        default=1.0,
        help="analyze the issue as it was this many minutes after it was opened (default: 1)",
    )
    parser.add_argument(
        "--context-dir", metavar="DIR", help="also write the context directory here"
    )
    parser.add_argument(
        "--apply", action="store_true", help="live only: post the comment (default: dry run)"
    )
    add_config_arguments(parser)
    add_checkout_argument(parser)


def run(args: argparse.Namespace) -> int:
    from issue_assistant.commands.common import (
        cli_writes,
        engine_name,
        get_issue,
        load_configs,
        snapshot_and_index,
    )
    from issue_assistant.config.weak_spots import warn_absent_labels
    from issue_assistant.learn.learned import Beside
    from issue_assistant.moment import open_moment
    from issue_assistant.pipeline import analyze, check_engines, engines_for
    from issue_assistant.preset import nothing_to_propose
    from issue_assistant.tracker.asof import AsOfView

    labels, config = load_configs(args)
    config = config.with_engine(strategy=args.strategy)  # the model: load_configs (--model)
    live = _live_target(args)
    if live is not None:
        from issue_assistant.commands.common import cache_dir
        from issue_assistant.live import analyze_live

        result = analyze_live(
            *live,
            labels=labels,
            config=config,
            engine_name=engine_name(args),
            writes=cli_writes(args.apply, config),  # type: ignore[arg-type]
            cache_dir=cache_dir(args, config),
        )
        if args.json and result.analysis is not None:
            print(result.decision_json)
        if result.skipped:
            print(f"issue-assistant: skipped: {result.skipped}", file=sys.stderr)
        elif not args.json:
            print(result.comment)
        return 0
    if args.apply:
        raise UserError(APPLY_OFFLINE)
    if not args.snapshot or args.issue is None:
        raise UserError("give -R OWNER/REPO --issue N (live), or --snapshot FILE --issue N")
    minutes = check_minutes(args.minutes)
    if args.context_dir:
        check_directory(args.context_dir)
    engine, fallback = engines_for(config, labels, engine_name(args))
    check_engines(engine, fallback)
    snapshot, index = snapshot_and_index(args, config)
    warn_absent_labels(labels, snapshot.repository)
    original = get_issue(snapshot, args.issue)
    if original.is_pull_request:
        raise UserError(f"#{args.issue} is a pull request, not an issue", where=str(snapshot.path))
    view = AsOfView.for_issue(snapshot, args.issue, after=timedelta(minutes=minutes))
    moment = open_moment(view, index, labels, config, Beside(), as_of=view.moment)
    result = analyze(moment, view.target(), config=config, engine=engine, fallback=fallback)
    if args.context_dir:
        result.context.write(args.context_dir)
    if args.json:
        from issue_assistant.decision import as_json

        print(json.dumps(as_json(result.decision), indent=2))
    elif result.plan.is_empty:
        # As live: no comment where there is nothing the issue lacks.
        reason = nothing_to_propose(result.plan, result.plan.preset)
        print(f"issue-assistant: no comment for #{args.issue}: {reason}", file=sys.stderr)
    else:
        sys.stdout.write(result.comment)
    if result.error:
        print(f"issue-assistant: warning: {result.error}; used the fallback", file=sys.stderr)
    return 0
