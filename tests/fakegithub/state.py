"""The fake GitHub's data: one repository's issues, comments, events, reactions and permissions.

Everything is kept as small records; `render` turns them into GitHub's REST JSON, with every
`url` pointing at the fake server (`base_url`).
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from issue_assistant.tracker.models import Issue
from issue_assistant.tracker.snapshot import Snapshot, read_snapshot

START = datetime(2025, 1, 1, tzinfo=UTC)
ROLES = ("admin", "maintain", "write", "triage", "read", "none")
LEGACY_PERMISSION = {"maintain": "write", "triage": "read"}
REACTIONS = frozenset({"+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"})


def iso(moment: datetime | None) -> str | None:
    """GitHub's time format (UTC, seconds, `Z`)."""
    if moment is None:
        return None
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class FakeIssue:
    number: int
    title: str
    body: str | None
    user: str
    created_at: datetime
    updated_at: datetime
    author_association: str | None = "NONE"
    state: str = "open"
    state_reason: str | None = None
    closed_at: datetime | None = None
    labels: list[str] = field(default_factory=list)
    is_pull_request: bool = False
    locked: bool = False


@dataclass
class FakeComment:
    id: int
    issue: int
    user: str
    body: str
    created_at: datetime
    updated_at: datetime
    author_association: str | None = "NONE"


@dataclass
class FakeEvent:
    id: int
    issue: int
    event: str
    actor: str | None
    created_at: datetime
    label: str | None = None
    state_reason: str | None = None
    canonical: int | None = None  # marked_as_duplicate: the original (GraphQL only)
    rename_from: str | None = None  # renamed: the titles before and after
    rename_to: str | None = None


@dataclass
class FakeReaction:
    id: int
    comment_id: int
    user: str
    content: str
    created_at: datetime


class RepoState:
    """One repository's tracker; the test-facing methods (`add_issue`, ...) change it directly."""

    def __init__(self, full_name: str = "octo/repo", viewer: str = "github-actions[bot]") -> None:
        self.full_name = full_name
        self.viewer = viewer
        self.lock = threading.RLock()
        self.clock = START
        self.step = timedelta(minutes=1)  # timedelta(0): everything happens in one second
        self.issues: dict[int, FakeIssue] = {}
        self.comments: dict[int, FakeComment] = {}
        self.events: list[FakeEvent] = []
        self.reactions: list[FakeReaction] = []
        self.labels: dict[str, dict[str, str | None]] = {}
        self.permissions: dict[str, str] = {}
        self.users: dict[str, str] = {}  # login -> type, in order of first appearance
        self.deleted: set[int] = set()  # answered 410 Gone, as GitHub does
        self.moved: dict[int, tuple[str, FakeIssue]] = {}  # transferred: the new home
        self._ids = 1000
        self.user(viewer)

    # ---- test-facing state API -------------------------------------------------------------

    def now(self) -> datetime:
        """The fake clock: starts at 2025-01-01 and moves `step` (a minute) per use."""
        with self.lock:
            moment = self.clock
            self.clock += self.step
            return moment

    def next_id(self) -> int:
        with self.lock:
            self._ids += 1
            return self._ids

    def user(self, login: str, type: str | None = None) -> str:
        """Register a user (`Bot` when the login ends in `[bot]`, unless `type` says otherwise)."""
        if login not in self.users or type is not None:
            self.users[login] = type or ("Bot" if login.endswith("[bot]") else "User")
        return login

    def add_label(
        self, name: str, color: str | None = "ededed", description: str | None = None
    ) -> None:
        if not any(n.casefold() == name.casefold() for n in self.labels):  # GitHub ignores case
            self.labels[name] = {"color": color, "description": description}

    def add_issue(
        self,
        title: str = "An issue",
        body: str | None = "",
        user: str = "alice",
        *,
        number: int | None = None,
        labels: list[str] | tuple[str, ...] = (),
        state: str = "open",
        state_reason: str | None = None,
        created_at: datetime | None = None,
        closed_at: datetime | None = None,
        updated_at: datetime | None = None,
        author_association: str | None = "NONE",
        is_pull_request: bool = False,
        user_type: str | None = None,
    ) -> int:
        """Add an issue (or a pull request) as it is now; labels are set without events."""
        with self.lock:
            number = number or max(self.issues, default=0) + 1
            created = created_at or self.now()
            for name in labels:
                self.add_label(name)
            if state == "closed" and closed_at is None:
                closed_at = created
            self.issues[number] = FakeIssue(
                number=number,
                title=title,
                body=body,
                user=self.user(user, user_type),
                created_at=created,
                updated_at=updated_at or closed_at or created,
                author_association=author_association,
                state=state,
                state_reason=state_reason,
                closed_at=closed_at,
                labels=list(labels),
                is_pull_request=is_pull_request,
            )
            return number

    def delete_issue(self, number: int) -> None:
        """Delete issue `number` (with its comments): GitHub answers 410 for it from now on."""
        with self.lock:
            del self.issues[number]
            self.comments = {k: c for k, c in self.comments.items() if c.issue != number}
            self.deleted.add(number)

    def transfer_issue(
        self, number: int, to: str = "octo/elsewhere", new_number: int = 9001
    ) -> None:
        """Transfer issue `number` to repository `to`: its old address redirects (301) there."""
        with self.lock:
            issue = self.issues.pop(number)
            issue.number = new_number
            self.moved[number] = (to, issue)

    def add_comment(
        self,
        number: int,
        body: str,
        user: str = "bob",
        *,
        created_at: datetime | None = None,
        author_association: str | None = "NONE",
    ) -> int:
        """Add a comment to issue `number`; returns its id."""
        with self.lock:
            issue = self.issues[number]
            created = created_at or self.now()
            cid = self.next_id()
            self.comments[cid] = FakeComment(
                cid, number, self.user(user), body, created, created, author_association
            )
            issue.updated_at = max(issue.updated_at, created)
            return cid

    def add_event(
        self,
        number: int,
        event: str,
        actor: str | None = "maintainer",
        *,
        created_at: datetime | None = None,
        label: str | None = None,
        state_reason: str | None = None,
        canonical: int | None = None,
        rename: tuple[str, str] | None = None,
    ) -> int:
        """Record a timeline event only (the issue's current state is not changed)."""
        with self.lock:
            issue = self.issues[number]
            created = created_at or self.now()
            eid = self.next_id()
            if actor is not None:
                self.user(actor)
            if label is not None:
                self.add_label(label)
            self.events.append(
                FakeEvent(
                    eid,
                    number,
                    event,
                    actor,
                    created,
                    label,
                    state_reason,
                    canonical,
                    *(rename or (None, None)),
                )
            )
            issue.updated_at = max(issue.updated_at, created)
            return eid

    def add_reaction(self, comment_id: int, login: str, content: str) -> int:
        """React to a comment; the same (login, content) twice is one reaction, as on GitHub."""
        with self.lock:
            for r in self.reactions:
                if (r.comment_id, r.user, r.content) == (comment_id, login, content):
                    return r.id
            rid = self.next_id()
            self.reactions.append(
                FakeReaction(rid, comment_id, self.user(login), content, self.now())
            )
            return rid

    def set_permission(self, login: str, role: str) -> None:
        """Give `login` a role: admin, maintain, write, triage, read or none."""
        if role not in ROLES:
            raise ValueError(f"unknown role {role!r}")
        self.permissions[self.user(login)] = role

    def load_snapshot(
        self, snapshot: Snapshot | str | os.PathLike[str], *, maintainer_role: str = "write"
    ) -> None:
        """Load a snapshot's issues, events, comments and labels; its maintainers get a role."""
        snap = snapshot if isinstance(snapshot, Snapshot) else read_snapshot(snapshot)
        repo = snap.repository
        with self.lock:
            self.full_name = repo.full_name
            for info in repo.labels:
                self.add_label(info.name, info.color, info.description)
            for login in repo.maintainers or []:
                self.set_permission(login, maintainer_role)
            for issue in snap.all_issues():
                self.load_issue(issue)

    def load_issue(self, issue: Issue) -> None:
        """Add one of our `Issue` records with its events and comments."""
        self.add_issue(
            issue.title,
            issue.body,
            issue.user.login,
            number=issue.number,
            labels=issue.labels,
            state=issue.state,
            state_reason=issue.state_reason,
            created_at=issue.created_at,
            closed_at=issue.closed_at,
            updated_at=issue.updated_at,
            author_association=issue.author_association,
            is_pull_request=issue.is_pull_request,
            user_type=issue.user.type,
        )
        for ev in issue.events or []:
            if ev.actor is not None:
                self.user(ev.actor.login, ev.actor.type)
            self.add_event(
                issue.number,
                ev.event,
                ev.actor.login if ev.actor else None,
                created_at=ev.created_at,
                label=ev.label,
                state_reason=ev.state_reason,
                canonical=ev.canonical,
                rename=(ev.rename_from or "", ev.rename_to or "")
                if ev.event == "renamed"
                else None,
            )
        for c in issue.comments or []:
            self.user(c.user.login, c.user.type)
            self.add_comment(
                issue.number,
                c.body,
                c.user.login,
                created_at=c.created_at,
                author_association=c.author_association,
            )
        if issue.updated_at is not None:
            self.issues[issue.number].updated_at = issue.updated_at
