"""The tracker as it was at a moment: later issues, labels, comments and closes rewound away."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime, timedelta

from issue_assistant.tracker.base import Tracker
from issue_assistant.tracker.models import Discussion, Issue, Release, Repository

ONE_MINUTE = timedelta(minutes=1)


def labels_at(issue: Issue, moment: datetime) -> list[str]:
    """Labels at `moment`: replayed from events when known, else the current ones."""
    if issue.events is None:
        return list(issue.labels)
    current: list[str] = []
    for ev in sorted(issue.events, key=lambda e: e.created_at):
        if ev.created_at > moment:
            break
        if ev.event == "labeled" and ev.label and ev.label not in current:
            current.append(ev.label)
        elif ev.event == "unlabeled" and ev.label in current:
            current.remove(ev.label)
    return current


def title_at(issue: Issue, moment: datetime) -> str:
    """The title at `moment`: the one a later `renamed` event renamed from, else the current."""
    later = [
        e
        for e in issue.events or []
        if e.event == "renamed" and e.created_at > moment and e.rename_from is not None
    ]
    if not later:
        return issue.title
    return min(later, key=lambda e: e.created_at).rename_from  # type: ignore[return-value]


def state_at(issue: Issue, moment: datetime) -> tuple[str, str | None, datetime | None]:
    """(state, state_reason, closed_at) at `moment`."""
    if issue.events:
        state, reason, closed_at = "open", None, None
        for ev in sorted(issue.events, key=lambda e: e.created_at):
            if ev.created_at > moment:
                break
            if ev.event == "closed":
                state, reason, closed_at = "closed", ev.state_reason, ev.created_at
            elif ev.event == "reopened":
                state, reason, closed_at = "open", None, None
        return state, reason, closed_at
    if issue.closed_at is not None and issue.closed_at <= moment:
        return "closed", issue.state_reason, issue.closed_at
    return "open", None, None


def names_issue(text: str | None, number: int, repository: str | None = None) -> bool:
    """Whether `text` refers to issue `number` as a whole reference: `#N` (also in "Duplicate
    of #N"), `OWNER/REPO#N` or a URL to the issue, of this repository when it is known.

    `#12` is not named by `#123`, `#12a`, `x#12` or another repository's `#12`.
    """
    if not text or str(number) not in text:
        return False
    forms = [rf"(?<![\w/#&])#{number}(?![\w-])"]
    if repository:
        repo = re.escape(repository)
        forms += [
            rf"(?<![\w/.-]){repo}#{number}(?![\w-])",
            rf"\bhttps?://(?:www\.)?github\.com/{repo}/(?:issues|pull)/{number}(?![\w-])",
        ]
    return re.search("|".join(forms), text, re.IGNORECASE) is not None


def duplicate_at(issue: Issue, moment: datetime, repository: str | None = None) -> int | None:
    """The known original at `moment`: only once the issue was closed or marked by then."""
    if issue.duplicate_of is None:
        return None
    marks = [
        e.created_at
        for e in issue.events or []
        if e.event == "marked_as_duplicate"
        or (e.event == "closed" and e.state_reason == "duplicate")
    ]
    marks += [
        c.created_at
        for c in issue.comments or []
        if names_issue(c.body, issue.duplicate_of, repository)
    ]
    if marks:
        return issue.duplicate_of if min(marks) <= moment else None
    if issue.closed_at is not None and issue.closed_at <= moment:
        return issue.duplicate_of
    return None


def rewind(issue: Issue, moment: datetime, repository: str | None = None) -> Issue:
    """A copy of `issue` as it was at `moment` (which must not be before its creation)."""
    state, reason, closed_at = state_at(issue, moment)
    return issue.model_copy(
        update={
            "title": title_at(issue, moment),
            "labels": labels_at(issue, moment),
            "state": state,
            "state_reason": reason,
            "closed_at": closed_at,
            "events": None
            if issue.events is None
            else [e for e in issue.events if e.created_at <= moment],
            "comments": None
            if issue.comments is None
            else [c for c in issue.comments if c.created_at <= moment],
            "duplicate_of": duplicate_at(issue, moment, repository),
            "fixed_by": issue.fixed_by if closed_at is not None else None,
        }
    )


def rewind_discussion(discussion: Discussion, moment: datetime) -> Discussion:
    """A discussion as it was at `moment`: an answer or close made later is not there yet.

    When it was locked (or closed, without `closed_at`) is unknown, so the view does not show it.
    """
    answered = discussion.answer_chosen_at is not None and discussion.answer_chosen_at <= moment
    closed = discussion.closed and discussion.closed_at is not None
    closed = closed and discussion.closed_at <= moment  # type: ignore[operator]
    return discussion.model_copy(
        update={
            "answer_chosen_at": discussion.answer_chosen_at if answered else None,
            "answer": discussion.answer if answered else None,
            "closed": closed,
            "closed_at": discussion.closed_at if closed else None,
            "locked": False,
        }
    )


class AsOfView:
    """A `Tracker` over another tracker, showing only what existed at `moment`.

    The issue under analysis (`hide`) is left out of `all_issues` so it cannot find itself.
    """

    def __init__(self, tracker: Tracker, moment: datetime, hide: int | None = None) -> None:
        self._tracker = tracker
        self.moment = moment
        self.hide = hide

    @classmethod
    def for_issue(cls, tracker: Tracker, number: int, after: timedelta = ONE_MINUTE) -> AsOfView:
        issue = tracker.get_issue(number)
        return cls(tracker, issue.created_at + after, hide=number)

    @property
    def repository(self) -> Repository:
        return self._tracker.repository

    @property
    def point_in_time(self) -> AsOfView:
        return self

    @property
    def source(self) -> Tracker:
        """The tracker this view rewinds (for indexes built once over all of it)."""
        return self._tracker

    def get_issue(self, number: int) -> Issue:
        issue = self._tracker.get_issue(number)
        if issue.created_at > self.moment:
            raise KeyError(number)
        return rewind(issue, self.moment, self.repository.full_name)

    def all_issues(self) -> Iterator[Issue]:
        for issue in self._tracker.all_issues():
            if issue.created_at <= self.moment and issue.number != self.hide:
                yield rewind(issue, self.moment, self.repository.full_name)

    def releases(self) -> list[Release] | None:
        """Releases published before the moment, newest first (None when unknown)."""
        known = self._tracker.releases()
        if known is None:
            return None
        return [r for r in known if r.published_at < self.moment]

    def discussions(self) -> list[Discussion] | None:
        """Discussions created before the moment, as they were then (None when unknown)."""
        known = self._tracker.discussions()
        if known is None:
            return None
        return [rewind_discussion(d, self.moment) for d in known if d.created_at < self.moment]

    def target(self) -> Issue:
        """The hidden issue itself, as it was at the moment.

        With unknown events every current label counts as added later, so it starts with none.
        """
        if self.hide is None:
            raise KeyError("no issue under analysis")
        issue = self.get_issue(self.hide)
        if issue.events is None:
            issue = issue.model_copy(update={"labels": []})
        return issue
