"""`snapshot`: fetch a repository's issues, events and comments from GitHub into a snapshot file."""

from __future__ import annotations

import argparse
import sys

from issue_assistant.errors import GitHubError

HELP = (
    "Fetch a repository's issues and pull requests, with their label, close and duplicate "
    "events and comments, and its releases and discussions, into a snapshot file (token from "
    "GITHUB_TOKEN or GH_TOKEN; resumable)."
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
    from issue_assistant.settings import current
    from issue_assistant.tracker.fetch import fetch_snapshot, partial_path

    settings = current()
    token = settings.require_token()
    base_url = args.base_url or settings.api_url
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
    except (GitHubError, KeyboardInterrupt):
        if partial.is_file():
            print(
                f"issue-assistant: stopped; the issues fetched so far are kept in {partial}: "
                "run the same command again to resume",
                file=sys.stderr,
            )
        raise
    issues = list(snapshot.all_issues())
    prs = sum(1 for i in issues if i.is_pull_request)
    print(
        f"{snapshot.repository.full_name}: {len(issues) - prs} issues and {prs} pull requests, "
        f"{len(snapshot.repository.maintainers or [])} maintainers, "
        f"{len(snapshot.releases() or [])} releases, {len(snapshot.discussions() or [])} "
        f"discussions, written to {args.output}"
    )
    return 0
