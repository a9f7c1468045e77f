"""The fake GitHub's releases, discussions (GraphQL) and pull request files.

A mixin of `Endpoints`: its state is created on first use, so `RepoState` needs no change.
GraphQL requests are answered by the first handler in `GRAPHQL` whose key occurs in the query
text, so other GraphQL queries can be added beside this one.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from tests.fakegithub.state import iso


@dataclass
class FakeRelease:
    id: int
    tag: str
    name: str | None
    body: str
    published_at: datetime | None
    draft: bool = False
    prerelease: bool = False


@dataclass
class FakeDiscussion:
    number: int
    title: str
    body: str
    author: str
    category: str
    created_at: datetime
    answer: str | None = None
    answer_chosen_at: datetime | None = None
    closed_at: datetime | None = None
    locked: bool = False
    labels: list[str] = field(default_factory=list)
    updated_at: datetime | None = None  # None: never updated since created

    @property
    def updated(self) -> datetime:
        return self.updated_at or self.created_at


class ContextEndpoints:
    """`/releases`, `/pulls/N/files` and the `discussions` GraphQL query."""

    GRAPHQL: tuple[tuple[str, str], ...] = (
        ("discussions(", "_graphql_discussions"),
        ("closedByPullRequestsReferences", "_graphql_closed_by"),
    )
    full_name: str
    base_url: str
    discussions_enabled: bool = True

    @property
    def releases(self) -> list[FakeRelease]:
        return self.__dict__.setdefault("_releases", [])

    @property
    def discussions(self) -> list[FakeDiscussion]:
        return self.__dict__.setdefault("_discussions", [])

    @property
    def pull_files(self) -> dict[int, list[str]]:
        return self.__dict__.setdefault("_pull_files", {})

    def add_release(
        self,
        tag: str,
        published_at: datetime | None,
        *,
        name: str | None = None,
        body: str = "",
        draft: bool = False,
        prerelease: bool = False,
    ) -> FakeRelease:
        release = FakeRelease(
            len(self.releases) + 1, tag, name, body, published_at, draft, prerelease
        )
        self.releases.append(release)
        return release

    def add_discussion(self, title: str, body: str, author: str, **kw: Any) -> FakeDiscussion:
        d = FakeDiscussion(len(self.discussions) + 1, title, body, author, **kw)
        self.discussions.append(d)
        return d

    def set_pull_files(self, number: int, files: list[str]) -> None:
        self.pull_files[number] = list(files)

    @property
    def closed_by(self) -> dict[int, list[tuple[int, bool, str]]]:
        """Issue number to the pull requests GitHub links as closing it, (number, merged,
        repository)."""
        return self.__dict__.setdefault("_closed_by", {})

    def link_closing_pull(
        self, issue: int, pr: int, merged: bool = True, repository: str | None = None
    ) -> None:
        """Link `pr` (of `repository`, default this one) as closing `issue` (the sidebar)."""
        self.closed_by.setdefault(issue, []).append((pr, merged, repository or self.full_name))

    # ---- REST ------------------------------------------------------------------------------

    def _list_releases(self, *, query: dict[str, str], body: Any) -> Any:
        # GitHub lists releases newest first (drafts, without published_at, among them)
        items = [
            {
                "id": r.id,
                "tag_name": r.tag,
                "name": r.name,
                "body": r.body,
                "draft": r.draft,
                "prerelease": r.prerelease,
                "published_at": iso(r.published_at),
                "created_at": iso(r.published_at),
                "url": f"{self.base_url}/repos/{self.full_name}/releases/{r.id}",
            }
            for r in reversed(self.releases)
        ]
        return self._page(f"/repos/{self.full_name}/releases", items, query)  # type: ignore[attr-defined]

    def _list_pull_files(self, number: str, *, query: dict[str, str], body: Any) -> Any:
        if int(number) not in self.pull_files:
            from tests.fakegithub.endpoints import ApiError

            raise ApiError(404)
        items = [
            {"filename": f, "status": "modified", "additions": 1, "deletions": 1, "changes": 2}
            for f in self.pull_files[int(number)]
        ]
        return self._page(f"/repos/{self.full_name}/pulls/{number}/files", items, query)  # type: ignore[attr-defined]

    # ---- GraphQL ---------------------------------------------------------------------------

    def _graphql(self, *, query: dict[str, str], body: Any) -> Any:
        text = str((body or {}).get("query", ""))
        self.__dict__["_query_text"] = text
        for key, name in self.GRAPHQL:
            if key in text:
                return getattr(self, name)((body or {}).get("variables") or {})
        return {"errors": [{"message": "the fake GitHub does not know this query"}]}

    def _graphql_discussions(self, variables: dict[str, Any]) -> Any:
        owner, name = self.full_name.split("/")
        if (variables.get("owner"), variables.get("name")) != (owner, name):
            msg = "Could not resolve to a Repository"
            return {"data": {"repository": None}, "errors": [{"type": "NOT_FOUND", "message": msg}]}
        if not self.discussions_enabled:
            return {"data": {"repository": {"hasDiscussionsEnabled": False, "discussions": None}}}
        first = min(int(variables.get("first") or 50), 100)
        after = variables.get("after")
        start = int(base64.b64decode(after).decode().split(":")[1]) if after else 0
        ordered = list(self.discussions)
        if "field: UPDATED_AT, direction: DESC" in self.__dict__.get("_query_text", ""):
            ordered.sort(key=lambda d: (d.updated, d.number), reverse=True)
        page = ordered[start : start + first]
        end = start + len(page)
        nodes = [
            {
                "number": d.number,
                "title": d.title,
                "body": d.body,
                "createdAt": iso(d.created_at),
                "closed": d.closed_at is not None,
                "closedAt": iso(d.closed_at),
                "locked": d.locked,
                "category": {"name": d.category},
                "author": {"login": d.author, "__typename": "User"},
                "answerChosenAt": iso(d.answer_chosen_at),
                "answer": {"body": d.answer} if d.answer is not None else None,
            }
            for d in page
        ]
        if "updatedAt" in self.__dict__.get("_query_text", ""):
            for node, d in zip(nodes, page, strict=True):
                node["updatedAt"] = iso(d.updated)
        cursor = base64.b64encode(f"cursor:{end}".encode()).decode()
        return {
            "data": {
                "repository": {
                    "hasDiscussionsEnabled": True,
                    "discussions": {
                        "totalCount": len(self.discussions),
                        "pageInfo": {
                            "hasNextPage": end < len(self.discussions),
                            "endCursor": cursor if page else after,
                        },
                        "nodes": nodes,
                    },
                }
            }
        }

    def _graphql_closed_by(self, variables: dict[str, Any]) -> Any:
        """`iN: issue(number: N) { number closedByPullRequestsReferences(first: K) ... }`."""
        if f"{variables.get('owner')}/{variables.get('name')}" != self.full_name:
            return {"data": {"repository": None}}
        text = self.__dict__.get("_query_text", "")
        found = re.findall(r"(\w+): issue\(number: (\d+)\)", text)
        first = int(re.search(r"closedByPullRequestsReferences\(first: (\d+)\)", text)[1])
        repo: dict[str, Any] = {}
        errors = []
        for alias, number in found:
            if int(number) not in self.issues:  # type: ignore[attr-defined]
                repo[alias] = None
                message = (
                    f"Could not resolve to an issue or pull request with the number of {number}."
                )
                errors.append(
                    {"type": "NOT_FOUND", "path": ["repository", alias], "message": message}
                )
                continue
            links = self.closed_by.get(int(number), [])[:first]
            nodes: list[dict[str, Any]] = [
                {"number": pr, "merged": merged} for pr, merged, _ in links
            ]
            if "nameWithOwner" in text:
                for node, (_, _, repo_name) in zip(nodes, links, strict=True):
                    node["repository"] = {"nameWithOwner": repo_name}
            repo[alias] = {
                "number": int(number),
                "closedByPullRequestsReferences": {"nodes": nodes},
            }
        return {"data": {"repository": repo}, **({"errors": errors} if errors else {})}
