"""`search`: earlier issues matching a query, as of a moment (the engines' search tool)."""

from __future__ import annotations

import argparse
import json
import sys

from issue_assistant.commands.args import add_snapshot_argument, moment
from issue_assistant.errors import UserError

HELP = (
    "Search a repository's issues (title matches weigh more), optionally as of a moment. "
    "Inside a command-line engine's run it searches the issue's own point-in-time index."
)
SOCKET_ENV = "ISSUE_ASSISTANT_SEARCH_SOCKET"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("query", help="words to look for")
    add_snapshot_argument(parser, required=False)
    parser.add_argument("--as-of", type=moment, metavar="T", help="only issues opened before T")
    parser.add_argument(
        "-L", "--limit", type=int, default=10, metavar="K", help="how many (default 10)"
    )
    parser.add_argument("--include-prs", action="store_true", help="include pull requests")
    parser.add_argument("--json", action="store_true", help="print JSON lines")
    parser.add_argument("--config", metavar="FILE", help="config.toml")


def _engine_search(path: str, query: str, limit: int) -> int:
    """Ask the engine process that started us (engines/command.py) to search, as of the issue."""
    import socket

    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        try:
            conn.connect(path)
        except OSError as exc:
            raise UserError(f"the engine's search is not running ({exc.strerror})") from None
        conn.sendall(json.dumps({"query": query, "limit": limit}).encode() + b"\n")
        conn.shutdown(socket.SHUT_WR)
        chunks = []
        while chunk := conn.recv(65536):
            chunks.append(chunk)
    sys.stdout.write(b"".join(chunks).decode(errors="replace"))
    return 0


def run(args: argparse.Namespace) -> int:
    from issue_assistant.settings import current

    if not args.query.strip():
        raise UserError("nothing to search for: give some words (a title, an error message)")
    path = current().search_socket
    if path:
        # Started by a command-line engine: only the issue's own point-in-time index answers,
        # and nothing is written (an index under --cache-dir would be).
        given = [
            flag
            for flag, value in (
                ("--snapshot", args.snapshot),
                ("--cache-dir", args.cache_dir),
                ("--config", args.config),
                ("--as-of", args.as_of),
                ("--include-prs", args.include_prs),
            )
            if value
        ]
        if given:
            raise UserError(
                f"inside an engine's run the search answers only as of the issue: "
                f"{', '.join(given)} cannot be used"
            )
        return _engine_search(path, args.query, args.limit)
    if not args.snapshot:
        raise UserError("give --snapshot FILE")
    from issue_assistant.commands.common import (
        load_config_only,
        snapshot_and_index,
        warn_after_fetch,
    )
    from issue_assistant.render import render

    config = load_config_only(args)
    snapshot, index = snapshot_and_index(args, config, vectors=False)
    warn_after_fetch(args.as_of, snapshot.repository)
    hits = index.search(
        args.query, as_of=args.as_of, limit=max(1, args.limit), include_prs=args.include_prs
    )
    view = snapshot
    if args.as_of:
        from issue_assistant.tracker.asof import AsOfView

        view = AsOfView(snapshot, args.as_of)
    rows = []
    for hit in hits:
        issue = view.get_issue(hit.number)
        rows.append({**hit.to_json(), "state": issue.state, "labels": issue.labels})
    if args.json:
        for row in rows:
            print(json.dumps(row, ensure_ascii=False))
    else:
        print(render("search.txt.j2", rows=rows), end="")
    return 0
