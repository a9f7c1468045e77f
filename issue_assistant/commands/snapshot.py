"""`snapshot`: fetch a repository's issues, events and comments from GitHub into a snapshot file."""

from __future__ import annotations

import argparse
import json
import sys

from issue_assistant.commands.args import (
    add_json_argument,
    add_repository_argument,
    repository_of,
)
from issue_assistant.errors import GitHubError, UserError

HELP = (
    "Fetch a repository's issues and pull requests, with their label, close and duplicate "
    "events and comments, and its releases and discussions, into a snapshot file (token from "
    "GITHUB_TOKEN or GH_TOKEN; resumable)."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_repository_argument(
        parser, help="the repository to fetch (default: $GH_REPO, then $GITHUB_REPOSITORY)"
    )
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
        help="continue an interrupted run from FILE.partial.jsonl (default: on, as for "
        "evaluate); --no-resume starts over",
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
    add_json_argument(parser, "what was written (counts, path, what is unknown) on one line")


def _kept(partial) -> int:  # noqa: ANN001
    """How many issues the partial file holds (lines of kind `issue`)."""
    try:
        with open(partial, encoding="utf-8") as fh:
            return sum(1 for line in fh if line.startswith('{"kind": "issue"'))
    except OSError:
        return 0


def _stopped(partial, why: str) -> str:  # noqa: ANN001
    """The line that says what is kept and how the run resumes."""
    if partial.is_file() and (n := _kept(partial)):
        return (
            f"issue-assistant: {why}; {n} issues fetched so far are kept in {partial}: run the "
            "same command again to go on from there (--no-resume starts over)"
        )
    return f"issue-assistant: {why} before any issue was saved; run the same command again"


def run(args: argparse.Namespace) -> int:
    from issue_assistant.settings import api_url, current
    from issue_assistant.tracker.fetch import fetch_snapshot, partial_path

    settings = current()
    full_name = settings.require_repository(repository_of(args))
    token = settings.require_token()
    try:
        base_url = api_url(args.base_url) if args.base_url else settings.api_url
    except ValueError as exc:
        raise UserError(str(exc), where="--base-url") from None
    partial = partial_path(args.output)
    try:
        snapshot = fetch_snapshot(
            full_name,
            args.output,
            resume=args.resume,
            token=token,
            base_url=base_url,
            fixed_by=args.fixed_by,
        )
    except KeyboardInterrupt:
        print(_stopped(partial, "interrupted"), file=sys.stderr)
        return 130
    except GitHubError:
        if partial.is_file():
            print(_stopped(partial, "stopped"), file=sys.stderr)
        raise
    issues = list(snapshot.all_issues())
    prs = sum(1 for i in issues if i.is_pull_request)
    releases, discussions = snapshot.releases(), snapshot.discussions()
    unknown = [k for k in ("releases", "discussions") if k not in snapshot.repository.includes]
    if args.json:
        out = {
            "repository": snapshot.repository.full_name,
            "path": str(args.output),
            "issues": len(issues) - prs,
            "pull_requests": prs,
            "maintainers": len(snapshot.repository.maintainers or []),
            "releases": None if "releases" in unknown else len(releases or []),
            "discussions": None if "discussions" in unknown else len(discussions or []),
            "unknown": unknown,
        }
        print(json.dumps(out, sort_keys=True))
        return 0
    counts = [
        "unknown releases" if "releases" in unknown else f"{len(releases or [])} releases",
        "unknown discussions"
        if "discussions" in unknown
        else f"{len(discussions or [])} discussions",
    ]
    print(
        f"{snapshot.repository.full_name}: {len(issues) - prs} issues and {prs} pull requests, "
        f"{len(snapshot.repository.maintainers or [])} maintainers, {', '.join(counts)}, "
        f"written to {args.output}"
    )
    return 0
