"""The fake GitHub's endpoints: each takes the path's groups, `query` and `body`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

from tests.fakegithub.context import ContextEndpoints
from tests.fakegithub.render import RenderedState
from tests.fakegithub.state import REACTIONS, iso

DEFAULT_MESSAGES = {
    401: "Bad credentials",
    403: "You have exceeded a secondary rate limit. Please wait a few minutes before you try "
    "again.",
    404: "Not Found",
    410: "Gone",
    422: "Validation Failed",
    429: "You have exceeded a secondary rate limit.",
}
STATE_REASONS = {
    "closed": {None, "completed", "not_planned", "duplicate"},
    "open": {None, "reopened"},
}


class ApiError(Exception):
    def __init__(self, status: int, message: str | None = None, **extra: Any) -> None:
        self.status = status
        self.body = {"message": message or DEFAULT_MESSAGES.get(status, "Error"), **extra}
        super().__init__(status, message)


class Endpoints(ContextEndpoints, RenderedState):
    """The REST endpoints over the state; `ROUTES` maps (method, path regex) to a method name.

    `{repo}` in a pattern stands for the repository's full name.
    """

    GRAPHQL = (*ContextEndpoints.GRAPHQL, ("MarkedAsDuplicateEvent", "_graphql_duplicates"))

    ROUTES: tuple[tuple[str, str, str], ...] = (
        ("GET", r"/rate_limit", "_rate_limit"),
        ("GET", r"/repos/{repo}", "_get_repo"),
        ("GET", r"/repos/{repo}/labels", "_list_repo_labels"),
        ("GET", r"/repos/{repo}/issues", "_list_issues"),
        ("GET", r"/repos/{repo}/issues/comments/(\d+)", "_get_comment"),
        ("PATCH", r"/repos/{repo}/issues/comments/(\d+)", "_edit_comment"),
        ("DELETE", r"/repos/{repo}/issues/comments/(\d+)", "_delete_comment"),
        ("GET", r"/repos/{repo}/issues/comments/(\d+)/reactions", "_list_reactions"),
        ("POST", r"/repos/{repo}/issues/comments/(\d+)/reactions", "_create_reaction"),
        ("DELETE", r"/repos/{repo}/issues/comments/(\d+)/reactions/(\d+)", "_delete_reaction"),
        ("GET", r"/repos/{repo}/issues/(\d+)", "_get_issue"),
        ("PATCH", r"/repos/{repo}/issues/(\d+)", "_edit_issue"),
        ("GET", r"/repos/{repo}/issues/(\d+)/comments", "_list_comments"),
        ("POST", r"/repos/{repo}/issues/(\d+)/comments", "_create_comment"),
        ("GET", r"/repos/{repo}/issues/(\d+)/labels", "_list_issue_labels"),
        ("POST", r"/repos/{repo}/issues/(\d+)/labels", "_add_labels"),
        ("DELETE", r"/repos/{repo}/issues/(\d+)/labels/([^/]+)", "_remove_label"),
        ("GET", r"/repos/{repo}/issues/(\d+)/timeline", "_timeline"),
        ("GET", r"/repos/{repo}/collaborators/([^/]+)/permission", "_permission"),
        ("GET", r"/repos/{repo}/releases", "_list_releases"),
        ("GET", r"/repos/{repo}/pulls/(\d+)/files", "_list_pull_files"),
        ("POST", r"/graphql", "_graphql"),
        ("GET", r"/repos/([^/]+/[^/]+)/issues/(\d+)", "_get_moved_issue"),
    )

    def _page(
        self, path: str, items: list[Any], query: dict[str, str]
    ) -> tuple[int, dict[str, str], Any]:
        """One page of `items` with GitHub's `Link` header (per_page at most 100)."""
        per_page = max(1, min(100, int(query.get("per_page", 30))))
        page = max(1, int(query.get("page", 1)))
        last = max(1, -(-len(items) // per_page))
        links = []

        def link(n: int, rel: str) -> str:
            params = {**query, "page": str(n)}
            return f'<{self.base_url}{path}?{urlencode(params)}>; rel="{rel}"'

        if page < last:
            links += [link(page + 1, "next"), link(last, "last")]
        if page > 1:
            links += [link(1, "first"), link(page - 1, "prev")]
        headers = {"Link": ", ".join(links)} if links else {}
        return 200, headers, items[(page - 1) * per_page : page * per_page]

    def _issue(self, number: str) -> Any:
        issue = self.issues.get(int(number))
        if issue is None:
            raise ApiError(410 if int(number) in self.deleted else 404)
        return issue

    # ---- endpoints -----------------------------------------------------------------------

    def _rate_limit(self, *, query: dict[str, str], body: Any) -> Any:
        core = {"limit": 5000, "remaining": 4999, "reset": 1893456000, "used": 1}
        return {"resources": {"core": core, "search": core, "graphql": core}, "rate": core}

    def _get_repo(self, *, query: dict[str, str], body: Any) -> Any:
        return self.repo_json()

    def _list_repo_labels(self, *, query: dict[str, str], body: Any) -> Any:
        labels = [self.label_json(n) for n in self.labels]
        return self._page(f"/repos/{self.full_name}/labels", labels, query)

    def _list_issues(self, *, query: dict[str, str], body: Any) -> Any:
        state = query.get("state", "open")
        wanted = [n for n in query.get("labels", "").split(",") if n]
        since = query.get("since")
        issues = [
            i
            for i in self.issues.values()
            if (state == "all" or i.state == state)
            and all(n.casefold() in {x.casefold() for x in i.labels} for n in wanted)
            and (since is None or iso(i.updated_at) >= since)  # type: ignore[operator]
        ]
        sort = query.get("sort", "created")
        keys: dict[str, Callable[[Any], Any]] = {
            "created": lambda i: (i.created_at, i.number),
            "updated": lambda i: (i.updated_at, i.number),
            "comments": lambda i: (sum(c.issue == i.number for c in self.comments.values()),),
        }
        if sort not in keys:
            raise ApiError(422, errors=[{"field": "sort", "code": "invalid"}])
        issues.sort(key=keys[sort], reverse=query.get("direction", "desc") != "asc")
        data = [self.issue_json(i) for i in issues]
        return self._page(f"/repos/{self.full_name}/issues", data, query)

    def _get_issue(self, number: str, *, query: dict[str, str], body: Any) -> Any:
        if int(number) in self.moved:
            to, issue = self.moved[int(number)]
            where = f"{self.base_url}/repos/{to}/issues/{issue.number}"
            return 301, {"Location": where}, {"message": "Moved Permanently", "url": where}
        return self.issue_json(self._issue(number))

    def _get_moved_issue(self, repo: str, number: str, *, query: dict[str, str], body: Any) -> Any:
        """A transferred issue, answered from its new repository."""
        for to, issue in self.moved.values():
            if to.lower() == repo.lower() and issue.number == int(number):
                data = self.issue_json(issue)
                data["repository_url"] = f"{self.base_url}/repos/{to}"
                data["url"] = f"{self.base_url}/repos/{to}/issues/{issue.number}"
                return data
        raise ApiError(404)

    def _edit_issue(self, number: str, *, query: dict[str, str], body: Any) -> Any:
        issue = self._issue(number)
        body = body or {}
        state = body.get("state", issue.state)
        if state not in STATE_REASONS:
            raise ApiError(422, errors=[{"resource": "Issue", "field": "state", "code": "invalid"}])
        reason = body.get("state_reason")
        if reason not in STATE_REASONS[state]:
            raise ApiError(
                422,
                errors=[{"resource": "Issue", "field": "state_reason", "code": "invalid"}],
            )
        now = self.now()
        if state != issue.state:
            event = "closed" if state == "closed" else "reopened"
            self.add_event(issue.number, event, self.viewer, created_at=now, state_reason=reason)
            issue.state = state
            issue.closed_at = now if state == "closed" else None
            issue.state_reason = reason or ("completed" if state == "closed" else "reopened")
        elif "state_reason" in body:
            issue.state_reason = reason
        for key in ("title", "body"):
            if key in body:
                setattr(issue, key, body[key])
        issue.updated_at = now
        return self.issue_json(issue)

    def _list_comments(self, number: str, *, query: dict[str, str], body: Any) -> Any:
        issue = self._issue(number)
        data = [self.comment_json(c) for c in self.comments.values() if c.issue == issue.number]
        return self._page(f"/repos/{self.full_name}/issues/{number}/comments", data, query)

    def _create_comment(self, number: str, *, query: dict[str, str], body: Any) -> Any:
        issue = self._issue(number)
        text = (body or {}).get("body")
        if not isinstance(text, str) or not text:
            raise ApiError(
                422, errors=[{"resource": "IssueComment", "code": "missing_field", "field": "body"}]
            )
        cid = self.add_comment(issue.number, text, self.viewer)
        return 201, {}, self.comment_json(self.comments[cid])

    def _comment(self, cid: str) -> Any:
        comment = self.comments.get(int(cid))
        if comment is None:
            raise ApiError(404)
        return comment

    def _get_comment(self, cid: str, *, query: dict[str, str], body: Any) -> Any:
        return self.comment_json(self._comment(cid))

    def _edit_comment(self, cid: str, *, query: dict[str, str], body: Any) -> Any:
        comment = self._comment(cid)
        text = (body or {}).get("body")
        if not isinstance(text, str) or not text:
            raise ApiError(
                422, errors=[{"resource": "IssueComment", "code": "missing_field", "field": "body"}]
            )
        comment.body = text
        comment.updated_at = self.now()
        return self.comment_json(comment)

    def _delete_comment(self, cid: str, *, query: dict[str, str], body: Any) -> Any:
        comment = self._comment(cid)
        del self.comments[comment.id]
        self.reactions = [r for r in self.reactions if r.comment_id != comment.id]
        return 204, {}, None

    def _list_reactions(self, cid: str, *, query: dict[str, str], body: Any) -> Any:
        comment = self._comment(cid)
        data = [self.reaction_json(r) for r in self.reactions if r.comment_id == comment.id]
        path = f"/repos/{self.full_name}/issues/comments/{cid}/reactions"
        return self._page(path, data, query)

    def _create_reaction(self, cid: str, *, query: dict[str, str], body: Any) -> Any:
        comment = self._comment(cid)
        content = (body or {}).get("content")
        if content not in REACTIONS:
            raise ApiError(
                422, errors=[{"resource": "Reaction", "field": "content", "code": "invalid"}]
            )
        before = len(self.reactions)
        rid = self.add_reaction(comment.id, self.viewer, content)
        reaction = next(r for r in self.reactions if r.id == rid)
        return (201 if len(self.reactions) > before else 200), {}, self.reaction_json(reaction)

    def _delete_reaction(self, cid: str, rid: str, *, query: dict[str, str], body: Any) -> Any:
        comment = self._comment(cid)
        for r in self.reactions:
            if r.id == int(rid) and r.comment_id == comment.id:
                self.reactions.remove(r)
                return 204, {}, None
        raise ApiError(404)

    def _list_issue_labels(self, number: str, *, query: dict[str, str], body: Any) -> Any:
        return [self.label_json(n) for n in self._issue(number).labels]

    def _add_labels(self, number: str, *, query: dict[str, str], body: Any) -> Any:
        issue = self._issue(number)
        names = body.get("labels") if isinstance(body, dict) else body
        if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
            raise ApiError(
                422, errors=[{"resource": "Label", "field": "labels", "code": "invalid"}]
            )
        for name in names:  # label names are compared without case; a known label keeps its own
            if name.casefold() not in {n.casefold() for n in issue.labels}:
                name = next((n for n in self.labels if n.casefold() == name.casefold()), name)
                self.add_event(issue.number, "labeled", self.viewer, label=name)
                self.add_label(name)
                issue.labels.append(name)
        return [self.label_json(n) for n in issue.labels]

    def _remove_label(self, number: str, name: str, *, query: dict[str, str], body: Any) -> Any:
        issue = self._issue(number)
        name = next((n for n in issue.labels if n.casefold() == name.casefold()), "")
        if not name:
            raise ApiError(404, "Label does not exist")
        issue.labels.remove(name)
        self.add_event(issue.number, "unlabeled", self.viewer, label=name)
        return [self.label_json(n) for n in issue.labels]

    def _timeline(self, number: str, *, query: dict[str, str], body: Any) -> Any:
        issue = self._issue(number)
        path = f"/repos/{self.full_name}/issues/{number}/timeline"
        return self._page(path, self.timeline_json(issue.number), query)

    def _permission(self, login: str, *, query: dict[str, str], body: Any) -> Any:
        data = self.permission_json(login)
        if data is None:
            raise ApiError(404)
        return data

    def _graphql_duplicates(self, variables: dict[str, Any]) -> Any:
        """An issue timeline's (un)marked-as-duplicate events, with the canonical issue."""
        if f"{variables.get('owner')}/{variables.get('name')}" != self.full_name:
            return {"data": {"repository": None}}
        number = int(variables.get("number", 0))
        if number not in self.issues:
            return {"data": {"repository": {"issue": None}}}
        nodes = []
        for ev in self.events:
            if ev.issue != number:
                continue
            if ev.event == "marked_as_duplicate":
                canonical = (
                    {"__typename": "Issue", "number": ev.canonical} if ev.canonical else None
                )
                node = {"__typename": "MarkedAsDuplicateEvent", "canonical": canonical}
            elif ev.event == "unmarked_as_duplicate":
                node = {"__typename": "UnmarkedAsDuplicateEvent"}
            else:
                continue
            nodes.append({**node, "createdAt": iso(ev.created_at)})
        timeline = {"timelineItems": {"nodes": nodes}}
        return {"data": {"repository": {"issue": timeline}}}
