"""`apply`: act on the maintainers' votes on the assistant's pending comments (live on GitHub)."""

from __future__ import annotations

import argparse
import os
import re
import sys

from issue_assistant.approve import Approver
from issue_assistant.commands.common import add_config_arguments, issue_number, load_configs
from issue_assistant.errors import GitHubError, UserError
from issue_assistant.live import connect
from issue_assistant.render import render

HELP = (
    "Apply or dismiss the assistant's pending proposals on OWNER/REPO that a maintainer voted on "
    "(dry run unless --apply)."
)
_REPO = re.compile(r"^[\w.-]+/[\w.-]+$")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "repository",
        nargs="?",
        metavar="OWNER/REPO",
        help="the repository on GitHub (default: $GH_REPO, then $GITHUB_REPOSITORY)",
    )
    parser.add_argument(
        "--issue",
        type=issue_number,
        action="append",
        metavar="N",
        help="only this issue (repeatable; default: every open issue with the pending label)",
    )
    parser.add_argument("--apply", action="store_true", help="write (default: dry run)")
    add_config_arguments(parser)


def run(args: argparse.Namespace) -> int:
    repository = (
        args.repository or os.environ.get("GH_REPO") or os.environ.get("GITHUB_REPOSITORY") or ""
    )
    if not _REPO.match(repository):
        raise UserError(f"expected OWNER/REPO (or GH_REPO), got {repository!r}")
    args.repository = repository
    labels, config = load_configs(args)
    writes = "live" if args.apply else "dry-run"
    try:
        tracker = connect(args.repository, bot_login=config.approval.bot_login)
        results = Approver(tracker, labels, config, writes=writes).run(args.issue)
    except GitHubError as exc:
        print(f"issue-assistant: error: {exc}", file=sys.stderr)
        return 1
    sys.stdout.write(render("apply.txt.j2", results=results, writes=writes))
    return 1 if any(r.status == "failed" for r in results) else 0
