"""`init`: draft labels.toml, config.toml and the workflow from a repository's labels."""

from __future__ import annotations

import argparse

from issue_assistant.commands.args import (
    add_json_argument,
    add_limit_argument,
    add_repository_argument,
    limit_of,
    repository_of,
)

HELP = (
    "Draft .github/issue-assistant/labels.toml and config.toml, and "
    ".github/workflows/issue-assistant.yml, from a repository's labels (on GitHub with a "
    "token, or from --snapshot FILE); never overwrites."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_repository_argument(parser)
    parser.add_argument(
        "--snapshot", metavar="FILE", help="read the labels and issues from a snapshot, offline"
    )
    parser.add_argument(
        "--readme", metavar="FILE", help="take the project description from this README"
    )
    add_limit_argument(
        parser, 1000, "live: count label use on the N most recent issues (default 1000)"
    )
    parser.add_argument(
        "--dir", default=".", metavar="DIR", help="where to write (default: the current directory)"
    )
    parser.add_argument("--force", action="store_true", help="overwrite files that exist")
    add_json_argument(parser, "what was inferred and written")


def run(args: argparse.Namespace) -> int:
    from issue_assistant.init.flow import run_init

    args.repository, args.limit = repository_of(args), limit_of(args)
    return run_init(args)
