"""Ground truth for one issue: what people did after the moment it is replayed at.

Labels count when a person (not a bot) added them after the moment and they are still on the
issue; a label present at the moment counts for neither side. Without events, every current label
counts as added later by a maintainer (the snapshot format says so).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from issue_assistant.comment import is_assistant_comment
from issue_assistant.config.labels import GROUPS, LabelsConfig
from issue_assistant.tracker.asof import labels_at, state_at
from issue_assistant.tracker.base import Tracker
from issue_assistant.tracker.duplicates import closed_as_duplicate, originals, refiled
from issue_assistant.tracker.models import Event, Issue, Repository, User

_FENCE = re.compile(r"```.*?(```|$)", re.DOTALL)
_CODE = re.compile(r"`[^`\n]*`")
_URL = re.compile(r"\bhttps?://\S+|\bwww\.\S+", re.IGNORECASE)


class Gold(BaseModel):
    """What the maintainers did, as the measures need it (stored in the results JSONL)."""

    model_config = ConfigDict(extra="forbid")

    labels: dict[str, list[str]] = Field(default_factory=lambda: {g: [] for g in GROUPS})
    present: list[str] = Field(default_factory=list)
    events_known: bool = True
    duplicate_of: int | None = None
    accept: list[int] = Field(default_factory=list)
    refiled: bool = False  # a report its reporter filed again, a duplicate of the first copy
    original_known: bool = False
    duplicate_unknown: bool = False  # closed as a duplicate of an original nobody named
    sure: bool = False
    asked: bool | None = None
    question_counted: bool = False
    reference_type: str | None = None
    type_gold: str | None = None

    def group(self, group: str) -> list[str]:
        return list(self.labels.get(group, []))

    @property
    def has_labels(self) -> bool:
        return any(self.labels.get(g) for g in GROUPS)


def is_bot(user: User | None, bot_login: str) -> bool:
    return user is not None and (user.is_bot or user.login == bot_login)


def _last_labeled(issue: Issue, label: str) -> Event | None:
    wanted = label.casefold()
    events = [
        e
        for e in issue.events or []
        if e.event == "labeled" and e.label is not None and e.label.casefold() == wanted
    ]
    return max(events, key=lambda e: e.created_at) if events else None


def present_labels(issue: Issue, moment: datetime, labels: LabelsConfig) -> list[str]:
    """Labels of `labels.toml` on the issue at the moment (none known without events)."""
    if issue.events is None:
        return []
    return labels.known(labels_at(issue, moment))


def later_labels(
    issue: Issue, moment: datetime, labels: LabelsConfig, bot_login: str
) -> dict[str, list[str]]:
    """Per group, the labels a person added after `moment` that are still on the issue."""
    out: dict[str, list[str]] = {g: [] for g in GROUPS}
    present = set(present_labels(issue, moment, labels))
    for raw in issue.labels:
        name = labels.canonical(raw)
        group = labels.group_of(raw)
        if name is None or group is None or name in present or name in out[group]:
            continue
        if issue.events is not None:
            last = _last_labeled(issue, raw)
            if last is None or last.created_at <= moment or is_bot(last.actor, bot_login):
                continue
        out[group].append(name)
    return out


def assistant_touched(issue: Issue, bot_login: str) -> bool:
    """The assistant commented on or labeled the issue (its labels would grade themselves)."""
    if any(is_assistant_comment(c.body) for c in issue.comments or []):
        return True
    return any(
        e.event == "labeled" and e.actor is not None and e.actor.login == bot_login
        for e in issue.events or []
    )


def _prose(text: str | None) -> str:
    text = _FENCE.sub(" ", text or "")
    text = _CODE.sub(" ", text)
    return _URL.sub(" ", text)


def maintainer_asked(
    issue: Issue, repo: Repository, moment: datetime, needs_info: str | None, bot_login: str
) -> bool | None:
    """Whether a maintainer asked for more information; None when the comments are unknown.

    Asked: a person added the needs-info label after the moment, or the first maintainer comment
    after the moment (not the reporter's, not a bot's) has a '?' outside code and links.
    """
    if needs_info:
        if issue.events is None:
            if needs_info in issue.labels:
                return True
        elif any(
            e.event == "labeled"
            and e.label == needs_info
            and e.created_at > moment
            and not is_bot(e.actor, bot_login)
            for e in issue.events
        ):
            return True
    if issue.comments is None:
        return None
    for c in sorted(issue.comments, key=lambda c: c.created_at):
        if c.created_at <= moment or is_bot(c.user, bot_login) or is_assistant_comment(c.body):
            continue
        if c.user.login == issue.user.login:
            continue
        if repo.is_maintainer(c.user.login, c.author_association):
            return "?" in _prose(c.body)
    return False


def maintainer_triaged(issue: Issue, repo: Repository, moment: datetime, bot_login: str) -> bool:
    """Opened by a maintainer, or labeled by one no later than `moment`."""
    if repo.is_maintainer(issue.user.login, issue.author_association):
        return True
    return any(
        e.event == "labeled"
        and e.created_at <= moment
        and e.actor is not None
        and not is_bot(e.actor, bot_login)
        and repo.is_maintainer(e.actor.login)
        for e in issue.events or []
    )


def is_sure_original(tracker: Tracker, number: int, moment: datetime, bot_login: str) -> bool:
    """The original existed and was open at `moment`, and a maintainer opened or triaged it."""
    try:
        original = tracker.get_issue(number)
    except KeyError:
        return False
    if original.created_at > moment or state_at(original, moment)[0] != "open":
        return False
    return maintainer_triaged(original, tracker.repository, moment, bot_login)


Refiled = Mapping[int, frozenset[int]]


def duplicate_gold(tracker: Tracker, issue: Issue, again: Refiled | None = None) -> int | None:
    """The original when the issue was closed as a duplicate of an older issue, or the first
    copy when it is a closed report its reporter filed again (`again`: the tracker's
    `tracker.duplicates.refiled`, read from it when not given), as the benchmarks count."""
    if issue.state != "closed":
        return None
    n = issue.duplicate_of
    if n is None:
        copies = (refiled(tracker.all_issues()) if again is None else again).get(issue.number)
        return min(copies) if copies else None  # numbers grow with time: the first copy
    if n == issue.number:
        return None
    try:
        return n if tracker.get_issue(n).created_at < issue.created_at else None
    except KeyError:
        return n if n < issue.number else None  # numbers grow with time on GitHub


def reference_type(
    issue: Issue, gold_type: str | None, present: list[str], labels: LabelsConfig
) -> str | None:
    """The issue's type for the question rule: the maintainers', else the one at the moment."""
    if gold_type:
        return gold_type
    for name in present + issue.labels:
        if labels.group_of(name) == "type":
            return labels.canonical(name)
    return None


def gold_for(
    tracker: Tracker,
    issue: Issue,
    moment: datetime,
    labels: LabelsConfig,
    bot_login: str,
    again: Refiled | None = None,
) -> Gold:
    """The ground truth for `issue` (as it is now in `tracker`) replayed at `moment`; `again`:
    the reports filed again by their reporter (`tracker.duplicates.refiled`), else read."""
    again = refiled(tracker.all_issues()) if again is None else again
    later = later_labels(issue, moment, labels, bot_login)
    present = present_labels(issue, moment, labels)
    type_labels = [n for n in issue.labels if labels.group_of(n) == "type"]
    gold_type = later["type"][0] if len(later["type"]) == 1 and len(type_labels) == 1 else None
    ref = reference_type(issue, gold_type, present, labels)
    ref_label = labels.type_label(ref)
    dup = duplicate_gold(tracker, issue, again)
    return Gold(
        labels=later,
        present=present,
        events_known=issue.events is not None,
        duplicate_of=dup,
        accept=originals(tracker, issue, again) if dup is not None else [],
        refiled=dup is not None and issue.duplicate_of is None,
        original_known=dup is not None and _known(tracker, dup),
        duplicate_unknown=dup is None and closed_as_duplicate(issue),
        sure=dup is not None and is_sure_original(tracker, dup, moment, bot_login),
        asked=maintainer_asked(issue, tracker.repository, moment, labels.needs_info, bot_login),
        question_counted=bool(ref_label and ref_label.ask),
        reference_type=ref,
        type_gold=gold_type,
    )


def _known(tracker: Tracker, number: int) -> bool:
    try:
        tracker.get_issue(number)
    except KeyError:
        return False
    return True
