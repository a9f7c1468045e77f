"""Releases, discussions and fixing pull requests from GitHub, for `snapshot` and live runs.

Releases come from REST (`/releases`), discussions from GraphQL (REST has no list of them), sent
through PyGithub's `Requester.graphql_query` so auth, retries and throttling are the tracker's
own. Fixing pull requests come from "Fixes #N" in their bodies and from GraphQL's
`Issue.closedByPullRequestsReferences` (many issues per query); the files they changed from REST
(`/pulls/N/files`). Imported by `tracker.github_tracker` (the tracker is only a type here:
no cycle).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from issue_assistant.errors import GitHubError
from issue_assistant.tracker.models import Discussion, Issue, Release, User, excerpt

if TYPE_CHECKING:
    from issue_assistant.tracker.client import GitHubClient

BODY_LIMIT = 4000
ANSWER_LIMIT = 1000
DISCUSSIONS_PAGE = 50
# GitHub's closing keywords: "Fixes #12", "closes #3, resolves #4", "Fixes OWNER/REPO#5" and
# "Fixes https://github.com/OWNER/REPO/issues/6" (the repository checked by `closing_links`).
_CLOSES = re.compile(
    r"\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\b:?\s+"
    r"(?:https?://github\.com/([\w.-]+/[\w.-]+)/issues/|([\w.-]+/[\w.-]+)?#)(\d+)\b",
    re.IGNORECASE,
)

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


# Live runs: the most recently updated first, so a run reads only what changed since the last.
LIVE_DISCUSSIONS_QUERY = """
query IssueAssistantDiscussionUpdates($owner: String!, $name: String!, $first: Int!,
    $after: String) {
  repository(owner: $owner, name: $name) {
    hasDiscussionsEnabled
    discussions(first: $first, after: $after, orderBy: {field: UPDATED_AT, direction: DESC}) {
      pageInfo { hasNextPage endCursor }
      nodes {
        number title body createdAt updatedAt closed closedAt locked
        category { name }
        author { login __typename }
        answerChosenAt
        answer { body }
      }
    }
  }
}
"""
CLOSED_BY_BATCH = 50
CLOSED_BY_FIRST = 5


def _time(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value.replace("Z", "+00:00")) if value else None


def list_releases(tracker: GitHubClient, first_page: int | None = None) -> list[Release]:
    """Published releases (drafts have no `published_at` and are left out), newest first.

    With `first_page`, only GitHub's first page of that many (the newest): one request."""
    path = f"{tracker.path}/releases"
    if first_page is None:
        items: Iterable[dict[str, Any]] = tracker.paginate(path)
    else:
        items = tracker.request("GET", path, params={"per_page": first_page}) or []
    out: list[Release] = []
    for data in items:
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


def graphql(tracker: GitHubClient, query: str, variables: dict[str, Any]) -> dict[str, Any]:
    """`data` of one GraphQL query; GitHub's errors become a `GitHubError`."""
    with tracker.api("POST", "/graphql"):
        _, answer = tracker.requester.graphql_query(query, variables)
    return answer.get("data") or {}


def graphql_partial(tracker: GitHubClient, query: str, variables: dict[str, Any]) -> dict[str, Any]:
    """`data` of one GraphQL query where some parts may be missing: NOT_FOUND errors (an issue
    deleted or transferred since it was listed) leave those parts null; any other error, or no
    data at all, is a `GitHubError`."""
    requester = tracker.requester
    with tracker.api("POST", "/graphql"):
        _, answer = requester.requestJsonAndCheck(
            "POST", requester.graphql_url, input={"query": query, "variables": variables}
        )
    errors = answer.get("errors") or []
    other = [e for e in errors if not isinstance(e, dict) or e.get("type") != "NOT_FOUND"]
    if other or not answer.get("data"):
        message = "; ".join(str(e.get("message") if isinstance(e, dict) else e) for e in errors)
        raise GitHubError("POST", "/graphql", 200, message or "no data", data=answer)
    return answer["data"]


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


def discussion_pages(tracker: GitHubClient, after: str | None = None) -> Iterator[DiscussionPage]:
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


@dataclass(frozen=True)
class UpdatedPage:
    """One page of discussions, the most recently updated first, each with its `updatedAt`."""

    enabled: bool
    discussions: list[tuple[str, Discussion]]
    cursor: str | None
    last: bool


def discussion_updates(tracker: GitHubClient, first: int, after: str | None) -> UpdatedPage:
    """One page of `LIVE_DISCUSSIONS_QUERY` (an empty last page where discussions are off)."""
    owner, _, name = tracker.full_name.partition("/")
    variables = {"owner": owner, "name": name, "first": first, "after": after}
    repo = graphql(tracker, LIVE_DISCUSSIONS_QUERY, variables).get("repository")
    if repo is None:
        raise GitHubError("POST", "/graphql", None, f"no repository {tracker.full_name}")
    if not repo.get("hasDiscussionsEnabled", True):
        return UpdatedPage(False, [], None, True)
    conn = repo["discussions"]
    info = conn["pageInfo"]
    found = [(n.get("updatedAt") or n["createdAt"], to_discussion(n)) for n in conn["nodes"]]
    return UpdatedPage(True, found, info.get("endCursor") or after, not info.get("hasNextPage"))


def closed_by_query(numbers: list[int]) -> str:
    """One GraphQL query for the pull requests that closed each of `numbers` (aliases `i<N>`)."""
    nodes = "nodes { number merged repository { nameWithOwner } }"
    fields = f"closedByPullRequestsReferences(first: {CLOSED_BY_FIRST}) {{ {nodes} }}"
    parts = [f"    i{int(n)}: issue(number: {int(n)}) {{ number {fields} }}" for n in numbers]
    return (
        "query IssueAssistantClosedBy($owner: String!, $name: String!) {\n"
        "  repository(owner: $owner, name: $name) {\n" + "\n".join(parts) + "\n  }\n}"
    )


def closed_by(
    tracker: GitHubClient, numbers: list[int], batch: int = CLOSED_BY_BATCH
) -> dict[int, list[int]]:
    """Issue number to the merged pull requests GitHub links as closing it (the sidebar's
    "Development"), `batch` issues per GraphQL query."""
    owner, _, name = tracker.full_name.partition("/")
    links: dict[int, list[int]] = {}
    for start in range(0, len(numbers), batch):
        chunk = numbers[start : start + batch]
        data = graphql_partial(tracker, closed_by_query(chunk), {"owner": owner, "name": name})
        repo = data.get("repository")
        if repo is None:
            raise GitHubError("POST", "/graphql", None, f"no repository {tracker.full_name}")
        for number in chunk:
            issue = repo.get(f"i{number}") or {}
            nodes = (issue.get("closedByPullRequestsReferences") or {}).get("nodes") or []
            prs = [n["number"] for n in nodes if n and n.get("merged") and _here(tracker, n)]
            if prs:
                links[number] = sorted(set(prs))
    return links


def _here(tracker: GitHubClient, node: dict[str, Any]) -> bool:
    """Whether a pull request node is in the tracker's repository (not a fork's or another's)."""
    name = (node.get("repository") or {}).get("nameWithOwner") or ""
    return name.lower() == tracker.full_name.lower()


def fixable(issue: Issue) -> bool:
    """A closed issue (not a pull request) closed as done: one a pull request may have fixed."""
    return (
        not issue.is_pull_request
        and issue.state == "closed"
        and issue.state_reason in (None, "completed")
    )


def closing_links(issues: Iterable[Issue], repository: str = "") -> dict[int, list[int]]:
    """Issue number to the closed pull requests whose body says "Fixes #N" about it.

    A reference naming a repository (`OWNER/REPO#N` or the issue's URL) counts only when it is
    `repository` (case-insensitive).
    """
    numbers = {i.number: i for i in issues}
    links: dict[int, list[int]] = {}
    for pr in numbers.values():
        if not pr.is_pull_request or pr.state != "closed":
            continue
        for m in _CLOSES.finditer(pr.body or ""):
            named = m[1] or m[2]
            if named and named.lower() != repository.lower():
                continue
            target = numbers.get(int(m[3]))
            if target is None or not fixable(target):
                continue
            links.setdefault(target.number, [])
            if pr.number not in links[target.number]:
                links[target.number].append(pr.number)
    return links


def pull_files(tracker: GitHubClient, number: int, limit: int = 300) -> list[str]:
    """The paths a pull request changed (GitHub lists at most 3,000; we keep `limit`)."""
    out: list[str] = []
    for data in tracker.paginate(f"{tracker.path}/pulls/{number}/files"):
        out.append(data["filename"])
        if len(out) >= limit:
            break
    return out
