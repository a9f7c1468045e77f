"""Labels an issue already had in a group, where they came from, and why nothing is proposed.

An issue form or template often applies the type (poetry's add `kind/bug`): that group is then
full, the engine's label for it is dropped, and the plan may hold nothing at all. Then nothing is
posted, and the reason given says so instead of calling the engine unsure.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import timedelta
from typing import Literal

from issue_assistant.config.labels import LabelsConfig
from issue_assistant.decision import Proposal
from issue_assistant.tracker.models import Event, Issue

#: a label added this soon after the issue was opened, by its reporter, came with the issue
#: (GitHub applies an issue form's labels as the issue is created, in the reporter's name)
OPENING = timedelta(seconds=60)
Source = Literal["template", "issue"]


def opened_with(issue: Issue, events: list[Event] | None = None) -> set[str] | None:
    """The labels applied as the issue was opened (its template's), or None when its events are
    unknown."""
    events = issue.events if events is None else events
    if events is None:
        return None
    reporter = issue.user.login.casefold()
    return {
        e.label
        for e in events
        if e.event == "labeled"
        and e.label
        and e.created_at - issue.created_at <= OPENING
        and (e.actor is None or e.actor.login.casefold() == reporter)
    }


def preset_labels(
    issue: Issue, labels: LabelsConfig, proposal: Proposal, at_opening: set[str] | None = None
) -> dict[str, Source]:
    """Each label of labels.toml the issue already has in a group the proposal adds nothing to,
    with where it came from: `template` (applied as the issue was opened: `at_opening`, else
    read from the issue's events) or `issue` (there, from whom is not known or not the
    template)."""
    known = at_opening if at_opening is not None else opened_with(issue)
    at_opening = {n.casefold() for n in known or ()}
    out: dict[str, Source] = {}
    for name in issue.labels:
        group = labels.group_of(name)
        if group is None or proposal.group_labels(group):
            continue
        out[labels.canonical(name) or name] = (
            "template" if name.casefold() in at_opening else "issue"
        )
    return out


def _backticks(name: str) -> str:
    return f"`{name}`"


def describe_preset(preset: Mapping[str, str], code: Callable[[str], str] = _backticks) -> str:
    """`kind/bug` came with the issue (its template); `area/cli` was already set (each name
    through `code`, e.g. a Markdown code span)."""
    came = [code(n) for n, s in preset.items() if s == "template"]
    there = [code(n) for n, s in preset.items() if s != "template"]
    parts = []
    if came:
        parts.append(f"{', '.join(came)} came with the issue (its template)")
    if there:
        parts.append(f"{', '.join(there)} {'was' if len(there) == 1 else 'were'} already set")
    return "; ".join(parts)


def nothing_to_propose(proposal: Proposal, preset: Mapping[str, str]) -> str:
    """Why a plan with no label, duplicate or question gets no comment (one line)."""
    labels = describe_preset(preset)
    if labels:  # the groups still open were looked at too: say so
        return (
            f"nothing to propose: {labels}; no other label is clear enough, no duplicate was "
            "found and nothing is missing to ask"
        )
    return "nothing to propose: no label proposed, no duplicate, no question"
