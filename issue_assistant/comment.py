"""The assistant's comment: the plan it carries in a hidden marker, and its rendering."""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from issue_assistant.decision import Decision, Proposal
from issue_assistant.render import render, safe_text

MARKER = "<!-- issue-assistant -->"
_PLAN = re.compile(r"<!-- issue-assistant:plan (\{.*?\}) -->", re.DOTALL)


class Evidence(BaseModel):
    model_config = ConfigDict(extra="forbid")

    number: int
    title: str
    state: str
    labels: list[str] = Field(default_factory=list)
    score: float = 0.0


class FileLink(BaseModel):
    """A likely file: its path in the checkout, a line, and a link at the checked-out commit."""

    model_config = ConfigDict(extra="forbid")

    path: str
    line: int | None = None
    url: str | None = None
    reason: str = ""


class SeeAlso(BaseModel):
    """An answered discussion that clearly matches the issue (never a duplicate)."""

    model_config = ConfigDict(extra="forbid")

    number: int
    title: str
    similarity: float = 0.0


class Outcome(BaseModel):
    model_config = ConfigDict(extra="forbid")

    action: Literal["approved", "dismissed"]
    actor: str
    at: datetime
    changes: list[str] = Field(default_factory=list)


class Plan(Proposal):
    """What approval needs, kept as JSON in the comment; validated again before any write."""

    version: Literal[1] = 1
    repository: str
    issue: int
    reporter: str
    evidence: list[Evidence] = Field(default_factory=list)
    created_at: datetime
    status: Literal["pending", "approved", "dismissed"] = "pending"
    history: list[Outcome] = Field(default_factory=list)
    # The issue's labels when the comment was written: a group changed since then is a human's.
    labels_before: list[str] = Field(default_factory=list)
    likely_files: list[FileLink] = Field(default_factory=list)
    see_also: list[SeeAlso] = Field(default_factory=list)

    @property
    def is_empty(self) -> bool:
        return not (self.labels() or self.duplicate or self.questions)

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
    ) -> Plan:
        return cls(
            **decision.model_dump(include=set(Proposal.model_fields)),
            repository=repository,
            issue=issue,
            reporter=reporter,
            evidence=list(evidence),
            created_at=created_at,
            labels_before=labels_before,
        )


def encode_plan(plan: Plan) -> str:
    fields = plan.model_dump(mode="json")
    for key in ("likely_files", "see_also"):  # optional: absent when empty
        if not fields.get(key):
            fields.pop(key, None)
    data = json.dumps(fields, ensure_ascii=True, sort_keys=True)
    # `<` and `>` escaped so no text inside can close the HTML comment.
    return data.replace("<", "\\u003c").replace(">", "\\u003e")


def extract_plan(body: str | None) -> Plan | None:
    """The plan in a comment body, or None when there is none or it does not validate."""
    match = _PLAN.search(body or "")
    if not match:
        return None
    try:
        return Plan.model_validate_json(match.group(1))
    except ValidationError:
        return None


def is_assistant_comment(body: str | None) -> bool:
    return MARKER in (body or "")


def render_comment(plan: Plan, fallback_from: str | None = None) -> str:
    """The comment text for a plan in its current status (pending, approved or dismissed).

    `fallback_from`: the engine that failed, when the fallback engine made the plan.
    """
    repo = plan.repository

    def safe(text: str | None) -> str:
        return safe_text(text, repo)

    return render(
        "comment.md.j2",
        plan=plan,
        safe=safe,
        marker=MARKER,
        plan_json=encode_plan(plan),
        fallback_from=fallback_from,
    )


def render_questions(plan: Plan) -> str:
    """The follow-up addressed to the reporter once a maintainer approved the questions."""
    return render("questions.md.j2", plan=plan, safe=lambda t: safe_text(t, plan.repository))
