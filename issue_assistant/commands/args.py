"""Argument helpers several commands share; light (argparse only), since the CLI's parser
imports every command module to build `--help`."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime

#: the values of `config.Strategy` (kept here so the parser needs no pydantic; a test compares)
STRATEGIES = ("zero-shot", "rag", "agent")


def add_config_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--labels", metavar="FILE", help="labels.toml (default: ./labels.toml, then .github/)"
    )
    parser.add_argument(
        "--config", metavar="FILE", help="config.toml (default: ./config.toml, then .github/)"
    )


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


def add_repository_argument(parser: argparse.ArgumentParser) -> None:
    """The optional OWNER/REPO positional of the commands that work on a live repository."""
    parser.add_argument(
        "repository",
        nargs="?",
        metavar="OWNER/REPO",
        help="the repository on GitHub (default: $GH_REPO, then $GITHUB_REPOSITORY)",
    )


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
