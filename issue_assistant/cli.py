"""Command-line parsing only: each subcommand lives in `issue_assistant.commands.<name>`."""

from __future__ import annotations

import argparse
import logging
import sys
from importlib import import_module

from issue_assistant import __version__
from issue_assistant.errors import EngineError, GitHubError, UserError

COMMANDS = [
    "analyze",
    "apply",
    "evaluate",
    "calibrate",
    "snapshot",
    "index",
    "search",
    "config",
    "mcp",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="issue-assistant",
        description="Propose labels, a possible duplicate and questions for new GitHub issues; "
        "nothing is written until a maintainer approves.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log more detail")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMANDS:
        module = import_module(f"issue_assistant.commands.{name}")
        p = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    # PyGithub installs its own handler on the "github" logger; ours is enough.
    logging.getLogger("github").handlers.clear()
    try:
        return int(args._run(args) or 0)
    except UserError as exc:
        print(f"issue-assistant: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except GitHubError as exc:
        print(f"issue-assistant: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except EngineError as exc:
        print(f"issue-assistant: engine failed, nothing was written: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("issue-assistant: interrupted", file=sys.stderr)
        return 130
