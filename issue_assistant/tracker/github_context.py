"""Releases, discussions and fixing pull requests from GitHub, for `snapshot`.

Releases come from REST (`/releases`, paginated), discussions from GraphQL (REST has no list of
them), sent through PyGithub's `Requester.graphql_query` so auth, retries and throttling are the
tracker's own. The files a fixing pull request changed come from REST (`/pulls/N/files`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from issue_assistant.errors import GitHubError
from issue_assistant.tracker.github import GitHubTracker
from issue_assistant.tracker.models import Discussion, Issue, Release, User, excerpt

BODY_LIMIT = 4000
ANSWER_LIMIT = 1000
DISCUSSIONS_PAGE = 50
# GitHub's closing keywords: "Fixes #12", "closes #3, resolves #4"
_CLOSES = re.compile(r"\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\b:?\s+#(\d+)", re.IGNORECASE)

DISCUSSIONS_QUERY = """
query IssueAssistantDiscussions($owner: String!, $name: String!, $first: Int!, $after: String) {
  repository(owner: $owner, name: $name) {
    hasDiscussionsEnabled
    discussions(first: $first, after: $after, orderBy: {field: CREATED_AT, direction: ASC}) {
      totalCount
      pageInfo { hasNextPage endCursor }
      nodes {
        number title body createdAt closed closedAt locked
        category { name }
        author { login __typename }
        answerChosenAt
        answer { body }
      }
    }
  }
}
"""


def _time(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value.replace("Z", "+00:00")) if value else None


def list_releases(tracker: GitHubTracker) -> list[Release]:
    """Published releases (drafts have no `published_at` and are left out), newest first."""
    out: list[Release] = []
    for data in tracker._list(f"{tracker._path}/releases"):
        published = _time(data.get("published_at"))
        if data.get("draft") or published is None:
            continue
        out.append(
            Release(
                tag=data["tag_name"],
                name=data.get("name") or None,
                published_at=published,
                notes=excerpt(data.get("body")),
                prerelease=bool(data.get("prerelease")),
            )
        )
    return sorted(out, key=lambda r: r.published_at, reverse=True)


def graphql(tracker: GitHubTracker, query: str, variables: dict[str, Any]) -> dict[str, Any]:
    """`data` of one GraphQL query; GitHub's errors become a `GitHubError`."""
    with tracker._api("POST", "/graphql"):
        _, answer = tracker._requester.graphql_query(query, variables)
    return answer.get("data") or {}


def to_discussion(node: dict[str, Any]) -> Discussion:
    author = node.get("author") or {}
    answer = node.get("answer") or {}
    return Discussion(
        number=node["number"],
        title=node.get("title") or "",
        body=excerpt(node.get("body"), BODY_LIMIT),
        category=(node.get("category") or {}).get("name"),
        user=User(login=author["login"], type=author.get("__typename", "User"))
        if author.get("login")
        else None,
        created_at=_time(node["createdAt"]),
        answer_chosen_at=_time(node.get("answerChosenAt")),
        answer=excerpt(answer.get("body"), ANSWER_LIMIT) if answer else None,
        closed=bool(node.get("closed")),
        closed_at=_time(node.get("closedAt")),
        locked=bool(node.get("locked")),
    )


@dataclass(frozen=True)
class DiscussionPage:
    discussions: list[Discussion]
    cursor: str | None
    last: bool


def discussion_pages(tracker: GitHubTracker, after: str | None = None) -> Iterator[DiscussionPage]:
    """Discussions, oldest first, one page at a time from cursor `after` (resumable)."""
    owner, _, name = tracker.full_name.partition("/")
    while True:
        variables = {"owner": owner, "name": name, "first": DISCUSSIONS_PAGE, "after": after}
        repo = graphql(tracker, DISCUSSIONS_QUERY, variables).get("repository")
        if repo is None:
            raise GitHubError("POST", "/graphql", None, f"no repository {tracker.full_name}")
        if not repo.get("hasDiscussionsEnabled", True):
            yield DiscussionPage([], after, True)
            return
        conn = repo["discussions"]
        info = conn["pageInfo"]
        after = info.get("endCursor") or after
        last = not info.get("hasNextPage")
        yield DiscussionPage([to_discussion(n) for n in conn["nodes"]], after, last)
        if last:
            return


def closing_links(issues: Iterable[Issue]) -> dict[int, list[int]]:
    """Issue number to the closed pull requests whose body says "Fixes #N" about it."""
    numbers = {i.number: i for i in issues}
    links: dict[int, list[int]] = {}
    for pr in numbers.values():
        if not pr.is_pull_request or pr.state != "closed":
            continue
        for m in _CLOSES.finditer(pr.body or ""):
            target = numbers.get(int(m[1]))
            if target is None or target.is_pull_request or target.state != "closed":
                continue
            if target.state_reason not in (None, "completed"):
                continue
            links.setdefault(target.number, [])
            if pr.number not in links[target.number]:
                links[target.number].append(pr.number)
    return links


def pull_files(tracker: GitHubTracker, number: int, limit: int = 300) -> list[str]:
    """The paths a pull request changed (GitHub lists at most 3,000; we keep `limit`)."""
    out: list[str] = []
    for data in tracker._list(f"{tracker._path}/pulls/{number}/files"):
        out.append(data["filename"])
        if len(out) >= limit:
            break
    return out
