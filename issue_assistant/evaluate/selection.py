"""Which issues an evaluation replays, and how a selection is split into shards."""

from __future__ import annotations

from dataclasses import dataclass, field

from issue_assistant.config.labels import LabelsConfig
from issue_assistant.errors import UserError
from issue_assistant.evaluate.gold import (
    Refiled,
    assistant_touched,
    duplicate_gold,
    later_labels,
)
from issue_assistant.evaluate.limits import DEFAULT_ISSUES, MAX_ISSUES
from issue_assistant.preset import opened_with
from issue_assistant.tracker.asof import ONE_MINUTE
from issue_assistant.tracker.base import Tracker
from issue_assistant.tracker.duplicates import refiled
from issue_assistant.tracker.models import Issue

WINDOW = 1000


@dataclass
class Selection:
    """The chosen issues, newest first, and how they were found."""

    issues: list[Issue]
    window: int = 0
    examined: int = 0
    qualified: int = 0
    skipped_assistant: int = 0
    events_known: int = 0
    # Per reason, how many closed issues of the window did not qualify.
    not_qualified: dict[str, int] = field(default_factory=dict)
    numbers: list[int] = field(default_factory=list)
    # The reports their reporters filed again (`tracker.duplicates.refiled`), over the whole
    # tracker: the gold reads them too, so they are found once.
    again: dict[int, frozenset[int]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.numbers = [i.number for i in self.issues]


# Why a closed issue is not replayed (the report counts each).
NO_LATER_LABEL = "no label of labels.toml added by people after opening, and not a duplicate"
FORM_ONLY = (
    "its type came with its issue form and no maintainer commented (nothing to measure on it)"
)


def why_not(
    tracker: Tracker,
    issue: Issue,
    labels: LabelsConfig,
    bot_login: str,
    again: Refiled | None = None,
) -> str | None:
    """None when the issue qualifies: people labelled it (a label of labels.toml, after
    opening), closed it as a duplicate (or it is a report its reporter filed again: `again`,
    see `gold.duplicate_gold`), or (its type came with its issue form) a maintainer commented
    on it: its other groups, a duplicate and the questions are measured there. Otherwise the
    reason, in words."""
    moment = issue.created_at + ONE_MINUTE
    if any(later_labels(issue, moment, labels, bot_login).values()):
        return None
    if duplicate_gold(tracker, issue, again) is not None:
        return None
    at_opening = opened_with(issue) or set()
    if any(labels.group_of(n) == "type" for n in at_opening):
        repo = tracker.repository
        if any(
            repo.is_maintainer(c.user.login, c.author_association)
            for c in issue.comments or []
            if c.user.login != issue.user.login and not c.user.is_bot
        ):
            return None
        return FORM_ONLY
    return NO_LATER_LABEL


def qualifies(
    tracker: Tracker,
    issue: Issue,
    labels: LabelsConfig,
    bot_login: str,
    again: Refiled | None = None,
) -> bool:
    """Whether the issue is one to replay (`why_not` says why not)."""
    return why_not(tracker, issue, labels, bot_login, again) is None


def select(
    tracker: Tracker,
    labels: LabelsConfig,
    bot_login: str,
    limit: int = DEFAULT_ISSUES,
    window: int = WINDOW,
    examined: int | None = None,
) -> Selection:
    """Closed issues, newest first, from the `window` closed issues opened last, that qualify and
    that the assistant never analyzed: the first `limit` of them.

    With `examined`, only that many of the window (newest first) are looked at (live mode, where
    only those have known histories).
    """
    if not 1 <= limit <= MAX_ISSUES:
        raise UserError(f"--issues must be between 1 and {MAX_ISSUES}, not {limit}")
    closed = [i for i in tracker.all_issues() if not i.is_pull_request and i.state == "closed"]
    closed.sort(key=lambda i: (i.created_at, i.number), reverse=True)
    closed = closed[:window]
    chosen: list[Issue] = []
    qualified = skipped = 0
    reasons: dict[str, int] = {}
    again = refiled(tracker.all_issues())
    for issue in closed[:examined]:
        reason = why_not(tracker, issue, labels, bot_login, again)
        if reason is not None:
            reasons[reason] = reasons.get(reason, 0) + 1
            continue
        qualified += 1
        if assistant_touched(issue, bot_login):
            skipped += 1
            continue
        if len(chosen) < limit:
            chosen.append(issue)
    return Selection(
        issues=chosen,
        window=len(closed),
        examined=len(closed[:examined]),
        qualified=qualified,
        skipped_assistant=skipped,
        again=again,
        not_qualified=reasons,
        events_known=sum(1 for i in chosen if i.events is not None),
    )


def parse_shard(text: str) -> tuple[int, int]:
    """'I/N' (1 <= I <= N) as (I, N)."""
    try:
        left, right = text.split("/")
        index, count = int(left), int(right)
    except ValueError:
        raise UserError(f"--shard must be I/N, such as 1/4, not {text!r}") from None
    if count < 1 or not 1 <= index <= count:
        raise UserError(f"--shard {text}: I must be between 1 and N")
    return index, count


def shard(items: list[Issue], index: int, count: int) -> list[tuple[int, Issue]]:
    """(position, issue) pairs of shard `index` of `count`: positions with p % count == index-1."""
    return [(p, issue) for p, issue in enumerate(items) if p % count == index - 1]
