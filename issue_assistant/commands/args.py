"""Argument helpers several commands share; light (argparse only), since the CLI's parser
imports every command module to build `--help`."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime

from issue_assistant.errors import UserError
from issue_assistant.names import lookup_order

VERBOSE = "say what is being done (-vv: and every request's detail); quiet otherwise"
QUIET = "no progress (a bar on a terminal, a line every 10 s otherwise): errors and warnings only"
#: the values of `config.Strategy` (kept here so the parser needs no pydantic; a test compares)
STRATEGIES = ("zero-shot", "rag", "agent")


def add_config_arguments(parser: argparse.ArgumentParser) -> None:
    for name in ("labels", "config"):
        order = lookup_order(f"{name}.toml")
        parser.add_argument(f"--{name}", metavar="FILE", help=f"{name}.toml: {order}")


def add_snapshot_argument(parser: argparse.ArgumentParser, required: bool = True) -> None:
    parser.add_argument(
        "--snapshot",
        metavar="FILE",
        required=required,
        help="a snapshot file (.jsonl or .jsonl.gz) to work from, offline",
    )
    parser.add_argument(
        "--cache-dir",
        metavar="DIR",
        help="where the index is kept (default: $ISSUE_ASSISTANT_CACHE, then [index] cache_dir)",
    )


def add_checkout_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--checkout",
        metavar="DIR",
        help="the repository's checkout to find likely files in (default: [code] checkout); "
        "'' for none",
    )


def add_strategy_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--strategy",
        choices=STRATEGIES,
        help="zero-shot, rag or agent (default: [engine] strategy, else the engine's own)",
    )


def add_repository_argument(
    parser: argparse.ArgumentParser,
    *,
    positional: bool = True,
    help: str = "the repository on GitHub (default: $GH_REPO, then $GITHUB_REPOSITORY)",
) -> None:
    """`-R/--repo OWNER/REPO`, as gh names it, on every command that takes a repository; with
    `positional`, the older `OWNER/REPO` positional too (hidden; `repository_of` warns)."""
    parser.add_argument("-R", "--repo", metavar="OWNER/REPO", help=help)
    if positional:
        parser.add_argument("repository", nargs="?", help=argparse.SUPPRESS)


#: the one answer to `--snapshot FILE` and `-R OWNER/REPO` given together, on every command
BOTH_SOURCES = (
    "--snapshot and -R both given: give one (--snapshot FILE works offline, -R reads GitHub)"
)


#: `--apply` where the source is a snapshot: nothing is ever written to one
APPLY_OFFLINE = "--apply goes with -R OWNER/REPO: a snapshot is never written to"


def check_sources(args: argparse.Namespace) -> None:
    """A command that reads a snapshot or GitHub is given one of them, not both."""
    if getattr(args, "snapshot", None) and getattr(args, "repo", None):
        raise UserError(BOTH_SOURCES)


def deprecated(old: str, new: str) -> None:
    """One line on stderr: `old` still works, `new` is the way to say it."""
    print(f"issue-assistant: warning: {old} is deprecated: use {new}", file=sys.stderr)


def repository_of(args: argparse.Namespace) -> str | None:
    """The repository of `-R/--repo`, else of the deprecated positional (with a warning)."""
    positional = getattr(args, "repository", None)
    repo = getattr(args, "repo", None)
    if positional and repo and positional != repo:
        raise UserError(f"two repositories given: {positional} and -R {repo}")
    if positional and not repo:
        deprecated(f"the positional OWNER/REPO ({positional})", f"-R {positional}")
    return repo or positional


def add_limit_argument(parser: argparse.ArgumentParser, default: int, help: str) -> None:
    """`--limit N`, a count of issues (`--issues N`, its old name, still works, hidden: it was
    too close to `--issue N`)."""
    parser.add_argument("-L", "--limit", type=int, default=None, metavar="N", help=help)
    parser.add_argument("--issues", type=int, dest="issues_count", help=argparse.SUPPRESS)
    parser.set_defaults(limit_default=default)


def limit_of(args: argparse.Namespace) -> int:
    """`--limit`, else the deprecated `--issues` (with a warning), else the default."""
    old = getattr(args, "issues_count", None)
    if old is not None and args.limit is None:
        deprecated(f"--issues {old}", f"--limit {old}")
        return old
    return args.limit if args.limit is not None else args.limit_default


def add_json_argument(parser: argparse.ArgumentParser, what: str = "the result") -> None:
    parser.add_argument("--json", action="store_true", help=f"print {what} as JSON")


def issue_number(value: str) -> int:
    try:
        n = int(value.lstrip("#"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an issue number: {value!r}") from None
    if n <= 0:
        raise argparse.ArgumentTypeError(f"not an issue number: {value!r}")
    return n


def moment(value: str) -> datetime:
    try:
        dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not an ISO 8601 time: {value!r} (e.g. 2024-03-01T12:00:00Z)"
        ) from None
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)
