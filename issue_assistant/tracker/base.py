"""The small tracker interface the logic is written against."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Protocol

from issue_assistant.tracker.models import Claim, Discussion, Issue, Release, Repository


class Tracker(Protocol):
    """Read access to one repository's issues (a snapshot, a point-in-time view, or GitHub)."""

    @property
    def repository(self) -> Repository: ...

    def get_issue(self, number: int) -> Issue:
        """The issue or pull request `number`; raises KeyError when there is none."""
        ...

    def all_issues(self) -> Iterable[Issue]:
        """Every issue and pull request known, oldest first."""
        ...


class Reaction(Protocol):
    """A reaction on a comment: `user.login`, `content` ('+1', '-1', ...) and `created_at`."""


class WritableTracker(Tracker, Protocol):
    """What the Action needs on GitHub: reads of comments, reactions and permissions, and writes.

    Implemented over PyGithub (`tracker.github`) and in memory (`tracker.memory`) for tests.
    Writes must be idempotent where GitHub allows it: callers look before they write again.
    """

    def all_issues(self, since: datetime | None = None, sort: str = "created") -> Iterable[Issue]:
        """Every issue and pull request, oldest first; with `since`, only those updated since
        (`sort="updated"`: least recently updated first)."""
        ...

    def list_comments(self, number: int) -> list: ...

    def comment_reactions(self, comment_id: int) -> list: ...

    def permission(self, login: str) -> str:
        """The user's role: admin, maintain, write, triage, read or none."""
        ...

    def issues_with_label(self, label: str, state: str = "open") -> list[Issue]:
        """Issues (and pull requests) carrying `label`; `state` is open, closed or all."""
        ...

    def add_labels(self, number: int, labels: list[str]) -> None: ...

    def remove_label(self, number: int, label: str) -> None: ...

    def create_comment(self, number: int, body: str) -> object: ...

    def edit_comment(self, comment_id: int, body: str) -> None: ...

    def delete_comment(self, comment_id: int) -> None:
        """Delete one of the bot's comments (one already gone is fine)."""
        ...

    def close(self, number: int, state_reason: str) -> None: ...

    def claim(self, comment_id: int) -> Claim:
        """React 👀 as the bot; `new` is False when the reaction was already there (held)."""
        ...

    def release(self, comment_id: int, claim_id: int) -> None:
        """Withdraw a claim (a claim already gone is fine)."""
        ...


def releases_of(tracker: object) -> list[Release] | None:
    """The tracker's releases, newest first, or None when it does not know them."""
    get = getattr(tracker, "releases", None)
    return get() if callable(get) else None


def discussions_of(tracker: object) -> list[Discussion] | None:
    """The tracker's discussions, oldest first, or None when it does not know them."""
    get = getattr(tracker, "discussions", None)
    return get() if callable(get) else None
