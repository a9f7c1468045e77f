"""The assistant's comment: the plan it carries in a hidden marker, and its rendering."""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from issue_assistant.decision import (
    QUESTION_MAX,
    REASON_MAX,
    SUMMARY_MAX,
    WHY_MAX,
    Decision,
    Duplicate,
    FileLink,
    Proposal,
    SeeAlso,
    bounded,
)
from issue_assistant.errors import EngineError
from issue_assistant.preset import describe_preset
from issue_assistant.render import render
from issue_assistant.sanitize import code_span

if TYPE_CHECKING:
    from issue_assistant.index.candidates import Searched

MARKER = "<!-- issue-assistant -->"
# GitHub refuses a comment longer than this; we stay a margin under it.
GITHUB_LIMIT = 65_536
COMMENT_MAX = GITHUB_LIMIT - 1_024
UNCOUNTED_MAX = 10  # votes that did not count, named in the comment at most
SHARED_MAX = 300  # what a similar issue shares with this one, in the table
TABLE_ROWS = 5
# The most characters each part of the comment shows (sanitized, so escapes included).
LIMITS = {
    "summary": 2 * SUMMARY_MAX,
    "question": 2 * QUESTION_MAX,
    "reason": 2 * REASON_MAX + 100,
    "title": 180,
    "see_also": 100,
    "labels": 200,
    "changes": 1_000,
    "shared": 2 * SHARED_MAX,
    "model": 100,
    "why": 400,
    "note": 2 * WHY_MAX,
}
# A candidate scoring this share of the duplicate threshold, or sharing an error or stack
# frames, is "possibly related" (never in the duplicate line).
RELATED_SHARE = 0.5
_PLAN = re.compile(r"<!-- issue-assistant:plan (\{.*?\}) -->", re.DOTALL)
# A GitHub login: letters, digits and single inner hyphens, at most 39 characters.
_LOGIN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}")


class Evidence(BaseModel):
    """A similar earlier issue in the comment's table, in the order of the search (its rank)."""

    model_config = ConfigDict(extra="forbid")

    number: int
    title: bounded(256)
    state: bounded(20)
    labels: list[bounded(100)] = Field(default_factory=list, max_length=30)
    # the search's fusion value: kept for plans written before, never shown (it means nothing
    # to a reader)
    score: float = 0.0
    # what the two share, each piece quoted, or how alike they are in words
    shared: bounded(SHARED_MAX) = ""
    # "duplicate": the proposed one; "related": possibly related, short of a duplicate
    relation: Literal["duplicate", "related", ""] = ""
    # its rank in the search, kept only for the proposed duplicate listed below the first rows
    # (the others' rank is their place in the table)
    rank: int | None = Field(default=None, ge=1)


class IndexProgress(BaseModel):
    """While a live first build is under way: how much of the tracker the search covered."""

    model_config = ConfigDict(extra="forbid")

    searched: int = Field(ge=0)
    of_about: int = Field(ge=0)


# The outcomes a plan keeps (the last ones): a comment edited by hand to hold thousands must
# still render under GitHub's limit when the next outcome is recorded.
HISTORY_MAX = 5
CHANGES_MAX = 20


def _last(limit: int):  # noqa: ANN202 - a validator
    return BeforeValidator(lambda v: v[-limit:] if isinstance(v, list) else v)


class Outcome(BaseModel):
    model_config = ConfigDict(extra="forbid")

    action: Literal["approved", "dismissed"]
    actor: bounded(100)
    at: datetime
    changes: Annotated[list[bounded(300)], _last(CHANGES_MAX)] = Field(default_factory=list)
    # The approval asked the reporter the plan's questions: the comment then shows them above
    # the fold, addressed to the reporter (no second comment repeats them).
    asked: bool = False


class SetAside(BaseModel):
    """A maintainer's vote that came in while the comment was being edited: it counts for
    neither text, and the comment asks for it again."""

    model_config = ConfigDict(extra="forbid")

    actor: bounded(100)
    via: bounded(40)


class Uncounted(BaseModel):
    """A vote on the pending comment that did not count, and why: its author has none of the
    roles that decide (`roles`, in words: "triage"), or it was given before the text was last
    changed (`earlier`). The comment says so under the way to approve."""

    model_config = ConfigDict(extra="forbid")

    actor: bounded(100)
    via: bounded(40)
    why: Literal["role", "earlier"]
    roles: bounded(60) = ""


class Plan(Proposal):
    """What approval needs, kept as JSON in the comment; validated again before any write."""

    version: Literal[1] = 1
    repository: str
    issue: int
    reporter: str
    evidence: list[Evidence] = Field(default_factory=list)
    created_at: datetime
    status: Literal["pending", "approved", "dismissed"] = "pending"
    history: Annotated[list[Outcome], _last(HISTORY_MAX)] = Field(default_factory=list)
    # The issue's labels when the comment was written: a group changed since then is a human's.
    labels_before: list[str] = Field(default_factory=list)
    likely_files: list[FileLink] = Field(default_factory=list)
    see_also: list[SeeAlso] = Field(default_factory=list)
    index_progress: IndexProgress | None = None
    set_aside: list[SetAside] = Field(default_factory=list, max_length=10)
    # Votes that did not count, said while the proposal waits (`approve`, earliest first).
    not_counted: list[Uncounted] = Field(default_factory=list, max_length=UNCOUNTED_MAX)
    # Labels of labels.toml the issue already had in a group given nothing more, and where each
    # came from (`preset.preset_labels`): the comment then says so instead of "not confident".
    preset: dict[str, Literal["template", "issue"]] = Field(default_factory=dict)
    # Labels approval takes off: the needs-info label once the reporter answered (`followup`).
    remove: list[bounded(100)] = Field(default_factory=list, max_length=5)

    @property
    def is_empty(self) -> bool:
        return not (self.labels() or self.duplicate or self.questions or self.remove)

    @classmethod
    def from_decision(
        cls,
        decision: Decision,
        *,
        repository: str,
        issue: int,
        reporter: str,
        created_at: datetime,
        evidence: list[Evidence] = (),  # type: ignore[assignment]
        labels_before: list[str] = (),  # type: ignore[assignment]
        preset: dict[str, str] | None = None,
    ) -> Plan:
        plan = cls(
            **decision.model_dump(include=set(Proposal.model_fields)),
            repository=repository,
            issue=issue,
            reporter=reporter,
            evidence=[e.model_copy(update={"labels": e.labels[:30]}) for e in evidence],
            created_at=created_at,
            labels_before=labels_before,
            preset=preset or {},
        )
        return fit(plan)


def alike_words(features: object | None) -> str:
    """How alike two issues are, in words, where they share nothing to quote."""
    dense = getattr(features, "dense", None)
    if dense is not None and dense >= 0.75:
        return "close in meaning"
    if getattr(features, "title", 0.0) >= 0.5:
        return "similar titles"
    return "some words in common"


def similar_evidence(
    context: Searched,
    duplicate: int | None,
    *,
    threshold: float,
    candidates: int,
    weights: dict | None = None,
) -> list[Evidence]:
    """The table's rows: the context's first candidates (the search as of the issue's creation
    that the engine was given too), with what each shares with the issue and whether it is the
    proposed duplicate or possibly related; the proposed duplicate is added with its rank when
    it ranks below them (the table holds all it shares: the duplicate line names one piece)."""
    from issue_assistant.index import duplicates
    from issue_assistant.index.evidence import describe

    # the candidates the duplicate decision scored (the features are computed once)
    scored = duplicates.assess(context, candidates, weights)
    assessed = {a.candidate.issue.number: a for a in scored}
    rows = []
    listed = list(enumerate(context.candidates[:TABLE_ROWS], 1))
    listed += [
        (rank, c)
        for rank, c in enumerate(context.candidates, 1)
        if rank > TABLE_ROWS and c.issue.number == duplicate
    ][:1]
    for rank, c in listed:
        a = assessed.get(c.issue.number)
        shared = describe(a.features.evidence, SHARED_MAX) if a is not None else ""
        relation = ""
        if c.issue.number == duplicate:
            relation = "duplicate"
        elif a is not None and (
            a.score >= RELATED_SHARE * threshold
            or a.features.evidence.errors
            or a.features.evidence.frames
            or a.features.follow_up
        ):
            relation = "related"
        rows.append(
            Evidence(
                number=c.issue.number,
                title=c.issue.title,
                state=c.issue.state,
                labels=c.issue.labels[:30],
                score=c.score,
                shared=shared or alike_words(a.features if a is not None else None),
                relation=relation,
                rank=rank if rank > TABLE_ROWS else None,
            )
        )
    return rows


def encode_plan(plan: Plan) -> str:
    fields = plan.model_dump(mode="json")
    optional = (
        "likely_files",
        "see_also",
        "set_aside",
        "not_counted",
        "preset",
        "tiers",
        "index_progress",
        "why",
    )
    for key in optional:  # absent when empty
        if not fields.get(key):
            fields.pop(key, None)
    for outcome in fields.get("history", []):
        if not outcome.get("asked"):
            outcome.pop("asked", None)
    for row in fields.get("evidence", []):
        if row.get("rank") is None:
            row.pop("rank", None)
    data = json.dumps(fields, ensure_ascii=True, sort_keys=True)
    # `<` and `>` escaped so no text inside can close the HTML comment.
    return data.replace("<", "\\u003c").replace(">", "\\u003e")


def extract_plan(body: str | None) -> Plan | None:
    """The plan in a comment body, or None when there is none or it does not validate."""
    # The last one: ours ends the comment (text above it is sanitized, but never trust order).
    matches = _PLAN.findall(body or "")
    if not matches:
        return None
    try:
        return Plan.model_validate_json(matches[-1])
    except ValidationError:
        return None


def is_assistant_comment(body: str | None) -> bool:
    return MARKER in (body or "")


def mention(login: str) -> str:
    """`@login` for the reporter's GitHub login, or "" when it is not one (a bot's, say): the
    comment mentions no one else, and nothing that is not a login."""
    return f"@{login}" if _LOGIN.fullmatch(login or "") else ""


def duplicate_tail(duplicate: Duplicate) -> str:
    """What the comment says after "Possibly the same problem as #N": the reason, without a
    leading "Same problem as #N" that would repeat it (raw: sanitized where shown)."""
    reason = duplicate.reason.strip()
    head = re.match(rf"same problem as #{duplicate.number}\b[\s:]*", reason, re.IGNORECASE)
    return reason[head.end() :] if head else reason


def _render(plan: Plan, fallback_from: str | None = None) -> str:
    return render(
        "comment.md.j2",
        plan=plan,
        labels=plan.labels(),
        words=plan.words(),
        is_empty=plan.is_empty,
        limits=LIMITS,
        marker=MARKER,
        plan_json=encode_plan(plan),
        fallback_from=fallback_from,
        preset=describe_preset(plan.preset, code=code_span),
        mention=mention(plan.reporter),
        duplicate_tail=duplicate_tail(plan.duplicate) if plan.duplicate else "",
    )


def visible_part(comment: str) -> str:
    """The part of a comment everyone on the issue reads: everything before its "Why"."""
    return comment.split("<details><summary>Why</summary>", 1)[0]


def _smaller(plan: Plan) -> Plan | None:
    """The plan with the next optional part dropped: evidence, summary, the notes of "Why", the
    last question, the likely files and discussions, then the oldest outcome kept."""
    if plan.evidence:
        return plan.model_copy(update={"evidence": []})
    if plan.summary:
        return plan.model_copy(update={"summary": ""})
    if plan.why:
        return plan.model_copy(update={"why": []})
    if plan.questions and plan.status == "pending":
        return plan.model_copy(update={"questions": plan.questions[:-1]})
    if plan.likely_files or plan.see_also:
        return plan.model_copy(update={"likely_files": [], "see_also": []})
    if len(plan.history) > 1:
        return plan.model_copy(update={"history": plan.history[1:]})
    return None


def fit(plan: Plan) -> Plan:
    """`plan` with optional parts dropped until its comment stays under GitHub's limit.

    Each field is bounded, so this only acts on pathological input (thousands of labels, say);
    a plan that cannot fit is an EngineError: nothing is posted.
    """
    while len(_render(plan)) > COMMENT_MAX:
        smaller = _smaller(plan)
        if smaller is None:
            raise EngineError(
                f"the comment for #{plan.issue} would exceed GitHub's {GITHUB_LIMIT} characters"
            )
        plan = smaller
    return plan


def render_comment(plan: Plan, fallback_from: str | None = None) -> str:
    """The comment text for a plan in its current status (pending, approved or dismissed).

    Never over GitHub's limit: an oversized plan is shown (and kept) without its optional parts.
    `fallback_from`: the engine that failed, when the fallback engine made the plan.
    """
    text = _render(plan, fallback_from)
    return text if len(text) <= COMMENT_MAX else _render(fit(plan), fallback_from)
