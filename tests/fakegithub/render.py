"""GitHub's REST JSON for the fake's records; every `url` points at the fake server."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from urllib.parse import quote

from tests.fakegithub.state import (
    LEGACY_PERMISSION,
    REACTIONS,
    FakeComment,
    FakeEvent,
    FakeIssue,
    FakeReaction,
    RepoState,
    iso,
)


class RenderedState(RepoState):
    """`RepoState` with GitHub's JSON for each record (`base_url` is set by the server)."""

    base_url = "http://127.0.0.1"  # replaced by the server once it listens

    @property
    def repo_url(self) -> str:
        return f"{self.base_url}/repos/{self.full_name}"

    @property
    def html_url(self) -> str:
        return f"{self.base_url}/{self.full_name}"

    def user_json(self, login: str | None) -> dict[str, Any] | None:
        if login is None:
            return None
        self.user(login)
        uid = list(self.users).index(login) + 1
        return {
            "login": login,
            "id": uid,
            "node_id": f"U_{uid}",
            "type": self.users[login],
            "site_admin": False,
            "url": f"{self.base_url}/users/{quote(login)}",
            "html_url": f"{self.base_url}/{quote(login)}",
        }

    def label_json(self, name: str) -> dict[str, Any]:
        info = self.labels.get(name, {})
        lid = list(self.labels).index(name) + 1 if name in self.labels else 0
        return {
            "id": lid,
            "node_id": f"LA_{lid}",
            "url": f"{self.repo_url}/labels/{quote(name, safe='')}",
            "name": name,
            "color": info.get("color"),
            "description": info.get("description"),
            "default": False,
        }

    def issue_json(self, issue: FakeIssue) -> dict[str, Any]:
        url = f"{self.repo_url}/issues/{issue.number}"
        data: dict[str, Any] = {
            "id": issue.number + 500000,
            "node_id": f"I_{issue.number}",
            "url": url,
            "repository_url": self.repo_url,
            "labels_url": url + "/labels{/name}",
            "comments_url": url + "/comments",
            "events_url": url + "/events",
            "timeline_url": url + "/timeline",
            "html_url": f"{self.html_url}/issues/{issue.number}",
            "number": issue.number,
            "title": issue.title,
            "body": issue.body,
            "user": self.user_json(issue.user),
            "labels": [self.label_json(n) for n in issue.labels],
            "state": issue.state,
            "state_reason": issue.state_reason,
            "locked": issue.locked,
            "assignee": None,
            "assignees": [],
            "milestone": None,
            "comments": sum(1 for c in self.comments.values() if c.issue == issue.number),
            "created_at": iso(issue.created_at),
            "updated_at": iso(issue.updated_at),
            "closed_at": iso(issue.closed_at),
            "author_association": issue.author_association,
        }
        if issue.is_pull_request:
            data["pull_request"] = {
                "url": f"{self.repo_url}/pulls/{issue.number}",
                "html_url": f"{self.html_url}/pull/{issue.number}",
                "diff_url": f"{self.html_url}/pull/{issue.number}.diff",
                "patch_url": f"{self.html_url}/pull/{issue.number}.patch",
                "merged_at": None,
            }
        return data

    def comment_json(self, c: FakeComment) -> dict[str, Any]:
        url = f"{self.repo_url}/issues/comments/{c.id}"
        counts = {k: 0 for k in sorted(REACTIONS)}
        for r in self.reactions:
            if r.comment_id == c.id:
                counts[r.content] += 1
        return {
            "id": c.id,
            "node_id": f"IC_{c.id}",
            "url": url,
            "html_url": f"{self.html_url}/issues/{c.issue}#issuecomment-{c.id}",
            "issue_url": f"{self.repo_url}/issues/{c.issue}",
            "user": self.user_json(c.user),
            "created_at": iso(c.created_at),
            "updated_at": iso(c.updated_at),
            "author_association": c.author_association,
            "body": c.body,
            "reactions": {"url": url + "/reactions", "total_count": sum(counts.values()), **counts},
            "performed_via_github_app": None,
        }

    def event_json(self, ev: FakeEvent) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": ev.id,
            "node_id": f"E_{ev.id}",
            "url": f"{self.repo_url}/issues/events/{ev.id}",
            "actor": self.user_json(ev.actor),
            "event": ev.event,
            "commit_id": None,
            "commit_url": None,
            "created_at": iso(ev.created_at),
            "performed_via_github_app": None,
        }
        if ev.label is not None:
            info = self.labels.get(ev.label, {})
            data["label"] = {"name": ev.label, "color": info.get("color")}
        if ev.event == "closed":
            data["state_reason"] = ev.state_reason
        if ev.event == "renamed":
            data["rename"] = {"from": ev.rename_from, "to": ev.rename_to}
        return data

    def timeline_json(self, number: int) -> list[dict[str, Any]]:
        """Events and comments (as `commented` items) of an issue, oldest first."""
        items: list[tuple[datetime, dict[str, Any]]] = [
            (ev.created_at, self.event_json(ev)) for ev in self.events if ev.issue == number
        ]
        for c in self.comments.values():
            if c.issue == number:
                data = self.comment_json(c)
                data.update(event="commented", actor=self.user_json(c.user))
                items.append((c.created_at, data))
        items.sort(key=lambda pair: pair[0])
        return [data for _, data in items]

    def reaction_json(self, r: FakeReaction) -> dict[str, Any]:
        return {
            "id": r.id,
            "node_id": f"REA_{r.id}",
            "user": self.user_json(r.user),
            "content": r.content,
            "created_at": iso(r.created_at),
        }

    def repo_json(self) -> dict[str, Any]:
        owner, name = self.full_name.split("/", 1)
        return {
            "id": 4242,
            "node_id": "R_4242",
            "name": name,
            "full_name": self.full_name,
            "owner": self.user_json(owner),
            "private": False,
            "url": self.repo_url,
            "html_url": self.html_url,
            "issues_url": self.repo_url + "/issues{/number}",
            "labels_url": self.repo_url + "/labels{/name}",
            "description": "A repository served by the fake GitHub",
            "default_branch": "main",
            "has_issues": True,
            "open_issues_count": sum(1 for i in self.issues.values() if i.state == "open"),
        }

    def permission_json(self, login: str) -> dict[str, Any] | None:
        """GitHub's answer: the legacy `permission` and the exact `role_name`; None for 404."""
        role = self.permissions.get(login)
        if role is None:
            if login not in self.users:
                return None
            role = "read"  # a known user with no role on a public repository
        return {
            "permission": LEGACY_PERMISSION.get(role, role),
            "role_name": role,
            "user": self.user_json(login),
        }
