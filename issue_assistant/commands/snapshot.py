"""`snapshot`: fetch a repository's issues, events and comments from GitHub into a snapshot file."""

from __future__ import annotations

import argparse
import os
import sys

from issue_assistant.errors import GitHubError, UserError
from issue_assistant.tracker.fetch import fetch_snapshot, partial_path

HELP = (
    "Fetch a repository's issues and pull requests, with their label, close and duplicate "
    "events and comments, and its releases and discussions, into a snapshot file (token from "
    "GITHUB_TOKEN; resumable)."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("repo", metavar="OWNER/REPO", help="the repository to fetch")
    parser.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="FILE",
        help="snapshot to write (.jsonl or .jsonl.gz)",
    )
    parser.add_argument(
        "--resume",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="continue an interrupted run from FILE.partial.jsonl (default: on)",
    )
    parser.add_argument(
        "--fixed-by",
        action="store_true",
        help='also save, for each closed issue a pull request says it fixes ("Fixes #N"), the '
        "files that pull request changed (one request per such pull request)",
    )
    parser.add_argument(
        "--base-url",
        metavar="URL",
        help="the REST API root (default: $GITHUB_API_URL, else https://api.github.com)",
    )


def run(args: argparse.Namespace) -> int:
    token = os.environ.get("GITHUB_TOKEN")
    if not token:
        raise UserError("GITHUB_TOKEN is not set: a token is needed to read the repository")
    base_url = args.base_url or os.environ.get("GITHUB_API_URL") or None
    partial = partial_path(args.output)
    try:
        snapshot = fetch_snapshot(
            args.repo,
            args.output,
            resume=args.resume,
            token=token,
            base_url=base_url,
            fixed_by=args.fixed_by,
        )
    except (GitHubError, KeyboardInterrupt) as exc:
        if partial.is_file():
            print(
                f"issue-assistant: stopped; the issues fetched so far are kept in {partial}: "
                "run the same command again to resume",
                file=sys.stderr,
            )
        if isinstance(exc, KeyboardInterrupt):
            raise
        print(f"issue-assistant: error: {exc}", file=sys.stderr)
        return 1
    issues = list(snapshot.all_issues())
    prs = sum(1 for i in issues if i.is_pull_request)
    print(
        f"{snapshot.repository.full_name}: {len(issues) - prs} issues and {prs} pull requests, "
        f"{len(snapshot.repository.maintainers or [])} maintainers, "
        f"{len(snapshot.releases() or [])} releases, {len(snapshot.discussions() or [])} "
        f"discussions, written to {args.output}"
    )
    return 0
