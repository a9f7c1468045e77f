"""`apply`: act on the maintainers' votes on the assistant's pending comments (live on GitHub)."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime

from issue_assistant.commands.args import (
    add_config_arguments,
    add_json_argument,
    add_repository_argument,
    issue_number,
    repository_of,
)

HELP = (
    "Apply or dismiss the assistant's pending proposals on OWNER/REPO that a maintainer voted on, "
    "and propose removing the needs-info label where the reporter has answered (dry run unless "
    "--apply)."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_repository_argument(parser)
    parser.add_argument(
        "--issue",
        type=issue_number,
        action="append",
        metavar="N",
        help="only this issue (repeatable; default: every open issue with the pending label)",
    )
    parser.add_argument("--apply", action="store_true", help="write (default: dry run)")
    add_json_argument(parser, "one JSON object per issue looked at")
    add_config_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from issue_assistant.approve.sweep import Approver
    from issue_assistant.commands.common import cli_writes, load_configs
    from issue_assistant.followup import follow_up_all
    from issue_assistant.live import connect
    from issue_assistant.render import render
    from issue_assistant.settings import current

    args.repository = current().require_repository(repository_of(args))
    labels, config = load_configs(args)
    writes = cli_writes(args.apply, config)
    tracker = connect(args.repository, bot_login=config.approval.bot_login, writes=writes)
    results = Approver(tracker, labels, config, writes=writes).run(args.issue)  # type: ignore[arg-type]
    # The reporters' answers to approved questions (`followup`): only what it proposes is shown.
    found = follow_up_all(tracker, labels, config, writes, datetime.now(UTC), args.issue)  # type: ignore[arg-type]
    results += [r for r in found if r.status == "proposed"]
    if args.json:
        for result in results:
            print(json.dumps(result.to_json(), sort_keys=True))
    else:
        sys.stdout.write(render("apply.txt.j2", results=results, writes=writes))
    return 1 if any(r.status == "failed" for r in results) else 0
