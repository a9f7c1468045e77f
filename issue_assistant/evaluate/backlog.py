"""`evaluate --backlog`: the backlog case replayed and scored.

A case is an issue that stayed without a label of a group for a while (`WAIT`) after it was
opened, until a person (not a bot) gave it one: it is analyzed as it was just before that label
(a minute before, with the discussion so far, as `backlog` analyzes an open issue now) and
scored against the labels people added from then on, for the groups it lacked. The same issue
replayed a minute after opening (the new-issue case) is scored beside it on the same groups.
Only label events say when a label came: a snapshot without events (hf-datasets) has no case.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from issue_assistant.config.labels import GROUPS, LabelsConfig
from issue_assistant.config.sections import Config
from issue_assistant.evaluate.gold import is_bot
from issue_assistant.evaluate.metrics import GroupMeasure, label_measure
from issue_assistant.evaluate.results import IssueResult
from issue_assistant.index import IssueIndex
from issue_assistant.tracker.asof import ONE_MINUTE, labels_at
from issue_assistant.tracker.base import Tracker
from issue_assistant.tracker.models import Issue

WAIT = timedelta(hours=1)  # how long a group stayed unlabelled for the issue to be a case


@dataclass(frozen=True)
class Case:
    """An issue labelled late: the moment it is replayed at and the groups it lacked then."""

    number: int
    title: str
    created_at: datetime
    moment: datetime
    groups: tuple[str, ...]
    state: str

    @property
    def waited(self) -> timedelta:
        return self.moment + ONE_MINUTE - self.created_at


@dataclass
class Cases:
    cases: list[Case] = field(default_factory=list)
    examined: int = 0
    events_unknown: int = 0


def _late_labels(issue: Issue, labels: LabelsConfig, bot_login: str, wait: timedelta) -> dict:
    """Per group, the first time a person labelled it after `wait`, while it had no label."""
    first: dict[str, datetime] = {}
    for ev in sorted(issue.events or [], key=lambda e: e.created_at):
        if ev.event != "labeled" or ev.label is None or is_bot(ev.actor, bot_login):
            continue
        group = labels.group_of(ev.label)
        if group is None or group in first or ev.created_at - issue.created_at < wait:
            continue
        before = labels_at(issue, ev.created_at - ONE_MINUTE)
        if any(labels.group_of(name) == group for name in before):
            continue
        first[group] = ev.created_at
    return first


def backlog_cases(
    tracker: Tracker, labels: LabelsConfig, bot_login: str, wait: timedelta = WAIT
) -> Cases:
    """Every issue labelled late, replayed a minute before its first late label."""
    out = Cases()
    for issue in tracker.all_issues():
        if issue.is_pull_request:
            continue
        out.examined += 1
        if issue.events is None:
            out.events_unknown += 1
            continue
        late = _late_labels(issue, labels, bot_login, wait)
        if not late:
            continue
        moment = min(late.values()) - ONE_MINUTE
        lacking = tuple(
            g
            for g in GROUPS
            if g in late and not any(labels.group_of(n) == g for n in labels_at(issue, moment))
        )
        out.cases.append(
            Case(issue.number, issue.title, issue.created_at, moment, lacking, issue.state)
        )
    return out


@dataclass
class Scored:
    """One side of the comparison: per group, precision and recall over the cases."""

    label: str
    groups: list[GroupMeasure]


def _only(result: IssueResult, groups: Sequence[str]) -> IssueResult:
    """`result` with gold labels kept for `groups` only (the groups the case lacked)."""
    kept = {g: (result.gold.labels.get(g, []) if g in groups else []) for g in GROUPS}
    return result.model_copy(update={"gold": result.gold.model_copy(update={"labels": kept})})


def score(results: Sequence[tuple[Case, IssueResult]], label: str) -> Scored:
    rows = [_only(r, case.groups) for case, r in results]
    measured = [label_measure(rows, g) for g in GROUPS]
    return Scored(label, [m for m in measured if m.issues])


@dataclass
class BacklogEvaluation:
    repository: str
    engine: str
    cases: Cases
    at_label: list[tuple[Case, IssueResult]]
    at_opening: list[tuple[Case, IssueResult]]

    def scored(self) -> list[Scored]:
        return [
            score(self.at_opening, "a minute after opening (the new-issue case)"),
            score(self.at_label, "a minute before the label (the backlog case)"),
        ]


def evaluate_backlog(
    tracker: Tracker,
    index: IssueIndex,
    labels: LabelsConfig,
    config: Config,
    *,
    engine_name: str | None = None,
    wait: timedelta = WAIT,
    limit: int | None = None,
) -> BacklogEvaluation:
    """Replay every case (at most `limit`) at both moments with the same engine."""
    from issue_assistant.evaluate.runner import Evaluator
    from issue_assistant.learn.store import bucket_cutoffs
    from issue_assistant.progress import counted

    cases = backlog_cases(tracker, labels, config.approval.bot_login, wait)
    chosen = cases.cases[:limit] if limit else cases.cases
    cutoffs = bucket_cutoffs([c.created_at for c in chosen], 500)
    evaluator = Evaluator(
        tracker,
        index=index,
        labels=labels,
        config=config,
        engine_name=engine_name,
        cutoffs=cutoffs,
    )
    at_label, at_opening = [], []
    for position, case in enumerate(counted(chosen, "evaluate --backlog", total=len(chosen))):
        issue = tracker.get_issue(case.number)
        after = case.moment - case.created_at
        at_label.append((case, evaluator.one(issue, position, after=after)))
        at_opening.append((case, evaluator.one(issue, position)))
    return BacklogEvaluation(
        tracker.repository.full_name, evaluator.engine.name, cases, at_label, at_opening
    )
