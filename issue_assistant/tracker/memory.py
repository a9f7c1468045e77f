"""An in-memory `WritableTracker` for tests: issues, comments, reactions, roles, and a write log.

It behaves like GitHub where that matters to the approval logic: removing a label that is not
there fails with 404, labels are added once, closing sets `state_reason`, and any operation can be
made to fail (`fail_on`) with a `GitHubError` or another exception.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from itertools import count
from pathlib import Path
from typing import Any

from issue_assistant.errors import GitHubError
from issue_assistant.labelnames import find_label, has_label
from issue_assistant.tracker.base import IssuesOnly
from issue_assistant.tracker.models import (
    Claim,
    Comment,
    Issue,
    LabelInfo,
    Reaction,
    Repository,
    User,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)


class MemoryTracker(IssuesOnly):
    """A repository held in dictionaries; every write is appended to `writes`."""

    def __init__(
        self,
        full_name: str = "octo/repo",
        *,
        login: str = "github-actions[bot]",
        roles: dict[str, str] | None = None,
        labels: list[str] | None = None,
        now: datetime = T0,
    ) -> None:
        self.full_name = full_name
        self.login = login
        self.roles: dict[str, str] = dict(roles or {})
        self.label_names = list(labels or [])
        self.issues: dict[int, Issue] = {}
        self.comments: dict[int, list[Comment]] = {}
        self.reactions: dict[int, list[Reaction]] = {}
        self.writes: list[tuple[Any, ...]] = []
        self.reads: list[tuple[Any, ...]] = []
        self.fail_on: dict[str, BaseException] = {}
        self.claims: list[tuple[Any, ...]] = []  # claim/release, kept apart from `writes`
        self._held: dict[int, tuple[int, datetime]] = {}
        self.now = now
        self._ids = count(1001)
        self.live_writes = False

    # -- test set-up (not recorded as writes) --------------------------------------------------

    def tick(self, minutes: float = 1) -> datetime:
        self.now += timedelta(minutes=minutes)
        return self.now

    def add_issue(
        self,
        number: int,
        title: str = "An issue",
        body: str = "",
        *,
        user: str = "reporter",
        user_type: str = "User",
        labels: list[str] | None = None,
        state: str = "open",
        pull_request: bool = False,
        created_at: datetime | None = None,
    ) -> Issue:
        issue = Issue(
            number=number,
            title=title,
            body=body,
            user=User(login=user, type=user_type),
            created_at=created_at or self.now,
            updated_at=created_at or self.now,
            state=state,  # type: ignore[arg-type]
            labels=list(labels or []),
            is_pull_request=pull_request,
        )
        self.issues[number] = issue
        self.comments.setdefault(number, [])
        return issue

    def add_comment(
        self, number: int, login: str, body: str, *, user_type: str = "User"
    ) -> Comment:
        cid = next(self._ids)
        comment = Comment(
            id=cid,
            user=User(login=login, type=user_type),
            created_at=self.tick(),
            body=body,
            url=f"https://github.com/{self.full_name}/issues/{number}#issuecomment-{cid}",
        )
        self.comments.setdefault(number, []).append(comment)
        return comment

    def react(self, comment_id: int, login: str, content: str = "+1") -> Reaction:
        at = self.tick()
        reaction = Reaction(
            user=User(login=login), content=content, created_at=at, id=next(self._ids)
        )
        self.reactions.setdefault(comment_id, []).append(reaction)
        return reaction

    def set_labels(self, number: int, labels: list[str]) -> None:
        """A human changing labels (not recorded as the assistant's write)."""
        self._set(number, labels=list(labels))

    def comment(self, comment_id: int) -> Comment:
        for comments in self.comments.values():
            for c in comments:
                if c.id == comment_id:
                    return c
        raise GitHubError("GET", f"/issues/comments/{comment_id}", 404, "Not Found")

    def _set(self, number: int, **update: Any) -> None:
        issue = self._issue(number)
        self.issues[number] = issue.model_copy(update={"updated_at": self.now, **update})

    def _issue(self, number: int) -> Issue:
        if number not in self.issues:
            path = f"/repos/{self.full_name}/issues/{number}"
            raise GitHubError("GET", path, 404, "Not Found")
        return self.issues[number]

    def _check(self, op: str) -> None:
        exc = self.fail_on.get(op)
        if exc is not None:
            raise exc

    # -- Tracker --------------------------------------------------------------------------------

    @property
    def repository(self) -> Repository:
        names = sorted(set(self.label_names) | {n for i in self.issues.values() for n in i.labels})
        return Repository(
            full_name=self.full_name,
            fetched_at=self.now,
            labels=[LabelInfo(name=n) for n in names],
        )

    def get_issue(self, number: int) -> Issue:
        self.reads.append(("get_issue", number))
        self._check("get_issue")
        try:
            return self.issues[number].model_copy()
        except KeyError:
            raise KeyError(number) from None

    def all_issues(self, since: datetime | None = None, sort: str = "created") -> Iterator[Issue]:
        self.reads.append(("all_issues", since))
        order = sorted(self.issues)
        if sort == "updated":
            order.sort(key=lambda n: (self.issues[n].updated_at or self.issues[n].created_at, n))
        for number in order:
            issue = self.issues[number]
            if since is None or (issue.updated_at or issue.created_at) >= since:
                yield issue.model_copy()

    # -- WritableTracker reads ------------------------------------------------------------------

    def history(self, number: int) -> None:
        """The timeline is not kept apart from the issue here: not readable."""
        return None

    def rate_remaining(self) -> None:
        return None

    def rate_reset(self) -> None:
        return None

    def keep_discussions(self, path: Path | None) -> None:
        """No discussions are read here."""

    def list_comments(self, number: int) -> list[Comment]:
        self.reads.append(("list_comments", number))
        self._check("list_comments")
        return [c.model_copy() for c in self.comments.get(number, [])]

    def comment_reactions(self, comment_id: int) -> list[Reaction]:
        self.reads.append(("comment_reactions", comment_id))
        self._check("comment_reactions")
        reactions = list(self.reactions.get(comment_id, []))
        if held := self._held.get(comment_id):
            bot = User(login=self.login, type="Bot")
            reactions.append(Reaction(id=held[0], user=bot, content="eyes", created_at=held[1]))
        return reactions

    def permission(self, login: str) -> str:
        self.reads.append(("permission", login))
        self._check("permission")
        return self.roles.get(login, "none")

    def issues_with_label(self, label: str, state: str = "open") -> list[Issue]:
        self.reads.append(("issues_with_label", label, state))
        return [
            i.model_copy()
            for _, i in sorted(self.issues.items())
            if state in ("all", i.state) and has_label(i.labels, label) and not i.is_pull_request
        ]

    # -- writes -----------------------------------------------------------------------------------

    def add_labels(self, number: int, labels: list[str]) -> None:
        self._check("add_labels")
        current = list(self._issue(number).labels)
        known = self.repository.labels
        for name in labels:  # GitHub keeps an existing label's spelling
            if not has_label(current, name):
                current.append(find_label((lab.name for lab in known), name) or name)
        self._set(number, labels=current)
        self.writes.append(("add_labels", number, list(labels)))

    def remove_label(self, number: int, label: str) -> None:
        self._check("remove_label")
        current = self._issue(number).labels
        there = find_label(current, label)
        if there is None:
            path = f"/repos/{self.full_name}/issues/{number}/labels/{label}"
            raise GitHubError("DELETE", path, 404, "Label does not exist")
        self._set(number, labels=[n for n in current if n != there])
        self.writes.append(("remove_label", number, label))

    def create_comment(self, number: int, body: str) -> Comment:
        self._check("create_comment")
        if number not in self.issues:
            raise GitHubError("POST", f"/issues/{number}/comments", 404, "Not Found")
        comment = self.add_comment(number, self.login, body, user_type="Bot")
        self.writes.append(("create_comment", number, body))
        return comment

    def edit_comment(self, comment_id: int, body: str) -> None:
        self._check("edit_comment")
        comment = self.comment(comment_id)
        comment.body = body
        comment.updated_at = self.tick()
        self.writes.append(("edit_comment", comment_id, body))

    def delete_comment(self, comment_id: int) -> None:
        self._check("delete_comment")
        for comments in self.comments.values():
            comments[:] = [c for c in comments if c.id != comment_id]
        self.writes.append(("delete_comment", comment_id, ""))

    def claim(self, comment_id: int) -> Claim:
        self._check("claim")
        self.comment(comment_id)
        held = self._held.get(comment_id)
        self.claims.append(("claim", comment_id))
        if held is not None:
            return Claim(id=held[0], new=False, created_at=held[1])
        cid = next(self._ids)
        self._held[comment_id] = (cid, self.now)
        return Claim(id=cid, new=True, created_at=self.now)

    def release(self, comment_id: int, claim_id: int) -> None:
        self._check("release")
        self.claims.append(("release", comment_id))
        if self._held.get(comment_id, (None,))[0] == claim_id:
            del self._held[comment_id]

    def close(self, number: int, state_reason: str) -> None:
        self._check("close")
        self._set(number, state="closed", state_reason=state_reason, closed_at=self.now)
        self.writes.append(("close", number, state_reason))
