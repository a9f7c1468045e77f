"""The small tracker interface the logic is written against."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Protocol

from issue_assistant.tracker.models import (
    Claim,
    Comment,
    Discussion,
    Event,
    Issue,
    Release,
    Repository,
)


class Tracker(Protocol):
    """Read access to one repository's issues (a snapshot, a point-in-time view, or GitHub).

    What a tracker may not know is a member that answers None, never a missing attribute."""

    @property
    def repository(self) -> Repository: ...

    def get_issue(self, number: int) -> Issue:
        """The issue or pull request `number`; raises KeyError when there is none."""
        ...

    def all_issues(self) -> Iterable[Issue]:
        """Every issue and pull request known, oldest first."""
        ...

    def releases(self) -> list[Release] | None:
        """The releases, newest first; None when the tracker does not know them."""
        ...

    def discussions(self) -> list[Discussion] | None:
        """The discussions, oldest first; None when the tracker does not know them."""
        ...

    @property
    def point_in_time(self) -> PointInTime | None:
        """The view rewinding another tracker to a moment this tracker is (an offline replay);
        None for a tracker as it is now."""
        ...


class PointInTime(Tracker, Protocol):
    """A tracker rewound to `moment` (`tracker.asof.AsOfView`) over the whole `source`, the
    issue under analysis (`hide`) left out."""

    moment: datetime
    hide: int | None

    @property
    def source(self) -> Tracker: ...


class IssuesOnly:
    """The answers of a tracker that knows only issues, as it is now: no releases, no
    discussions, no point in time (a base for such trackers)."""

    def releases(self) -> None:
        return None

    def discussions(self) -> None:
        return None

    @property
    def point_in_time(self) -> None:
        return None


def full_tracker(tracker: Tracker) -> Tracker:
    """The whole tracker behind a point-in-time view (itself when it is none): what indexes
    built once are built over, each query filtering by the moment."""
    view = tracker.point_in_time
    return view.source if view is not None else tracker


class WritableTracker(Tracker, Protocol):
    """What the Action needs on GitHub: reads of comments, reactions and permissions, and writes.

    Implemented over PyGithub (`tracker.github_tracker`) and in memory (`tracker.memory`) for tests.
    Writes must be idempotent where GitHub allows it: callers look before they write again.
    """

    # Whether this run writes (the `live` mode), set by the run's entry: an error then says
    # whether anything was written.
    live_writes: bool

    def all_issues(self, since: datetime | None = None, sort: str = "created") -> Iterable[Issue]:
        """Every issue and pull request, oldest first; with `since`, only those updated since
        (`sort="updated"`: least recently updated first)."""
        ...

    def list_comments(self, number: int) -> list: ...

    def history(self, number: int) -> tuple[list[Event], list[Comment]] | None:
        """The issue's timeline (events, comments), one more read; None when not readable."""
        ...

    def rate_remaining(self) -> int | None:
        """Requests left this hour as the last answer said; None when unknown or unlimited."""
        ...

    def rate_reset(self) -> datetime | None:
        """When the hourly rate limit resets, as the last answer said; None when unknown."""
        ...

    def keep_discussions(self, path: Path | None) -> None:
        """Keep the discussions in the file `path` between runs (a no-op where none are read)."""
        ...

    def comment_reactions(self, comment_id: int) -> list: ...

    def permission(self, login: str) -> str:
        """The user's role: admin, maintain, write, triage, read or none."""
        ...

    def issues_with_label(self, label: str, state: str = "open") -> list[Issue]:
        """Issues (and pull requests) carrying `label`; `state` is open, closed or all."""
        ...

    def add_labels(self, number: int, labels: list[str]) -> None: ...

    def remove_label(self, number: int, label: str) -> None: ...

    def create_comment(self, number: int, body: str) -> Comment: ...

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
