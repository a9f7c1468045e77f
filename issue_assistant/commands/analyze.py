"""`analyze`: the comment the assistant would post for an issue, as it was just after opening."""

from __future__ import annotations

import argparse
import json
import re
import sys
from datetime import timedelta

from issue_assistant.commands.args import add_config_arguments, add_snapshot_argument, issue_number
from issue_assistant.errors import UserError

HELP = (
    "Print the comment the assistant would post for an issue (offline on a snapshot with "
    "--snapshot FILE --issue N, or live on OWNER/REPO#N)."
)
_LIVE = re.compile(r"^([\w.-]+/[\w.-]+)#(\d+)$")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("target", nargs="?", metavar="OWNER/REPO#N", help="a live issue on GitHub")
    add_snapshot_argument(parser, required=False)
    parser.add_argument("--issue", type=issue_number, metavar="N", help="the issue in the snapshot")
    parser.add_argument("--engine", metavar="NAME", help="engine (default: [engine] name)")
    parser.add_argument("--model", metavar="M", help="model for the engine")
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


def run(args: argparse.Namespace) -> int:
    from issue_assistant.commands.common import (
        cli_writes,
        engine_name,
        get_issue,
        load_configs,
        snapshot_and_index,
    )
    from issue_assistant.pipeline import analyze, engines_for
    from issue_assistant.tracker.asof import AsOfView

    labels, config = load_configs(args)
    if args.target:
        match = _LIVE.match(args.target)
        if not match:
            raise UserError(f"expected OWNER/REPO#N, got {args.target!r}")
        from issue_assistant.live import analyze_live

        result = analyze_live(
            match.group(1),
            int(match.group(2)),
            labels=labels,
            config=config,
            engine_name=engine_name(args),
            writes=cli_writes(args.apply, config),  # type: ignore[arg-type]
        )
        if result.skipped:
            print(f"issue-assistant: skipped: {result.skipped}", file=sys.stderr)
            return 0
        print(result.comment if not args.json else result.decision_json)
        return 0
    if not args.snapshot or args.issue is None:
        raise UserError("give OWNER/REPO#N, or --snapshot FILE and --issue N")
    engine, fallback = engines_for(config, labels, engine_name(args))
    snapshot, index = snapshot_and_index(args, config)
    original = get_issue(snapshot, args.issue)
    if original.is_pull_request:
        raise UserError(f"#{args.issue} is a pull request, not an issue", where=str(snapshot.path))
    view = AsOfView.for_issue(snapshot, args.issue, after=timedelta(minutes=args.minutes))
    issue = view.target()
    result = analyze(
        view,
        issue,
        index=index,
        labels=labels,
        config=config,
        engine=engine,
        fallback=fallback,
        as_of=view.moment,
    )
    if args.context_dir:
        result.context.write(args.context_dir)
    if args.json:
        print(json.dumps(result.decision.model_dump(mode="json"), indent=2))
    else:
        sys.stdout.write(result.comment)
    if result.error:
        print(f"issue-assistant: warning: {result.error}; used the fallback", file=sys.stderr)
    return 0
