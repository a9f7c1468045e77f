"""What every LLM engine sends (the context as system and user prompts) and answer checking."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from issue_assistant.config.labels import GROUPS
from issue_assistant.decision import Decision
from issue_assistant.engines.failures import EngineFailure
from issue_assistant.render import render

if TYPE_CHECKING:
    from issue_assistant.config.sections import Strategy
    from issue_assistant.context import Context

ANSWER_FIELDS = (
    "type",
    "areas",
    "topics",
    "priority",
    "duplicate",
    "questions",
    "summary",
    "files",
)


def prompts(context: Context, strategy: Strategy = "rag") -> tuple[str, str]:
    """(system, user): the task, project and labels; then the issue, and per strategy more.

    zero-shot: the issue alone; rag: and the similar earlier issues, and the releases,
    discussions and likely files where they are known; agent: the same, and the hint to look
    with the read-only tools (what is shown is a starting point).
    """
    files = context.files()
    system = "\n\n".join([files["instructions.md"], files["project.md"], files["labels.md"]])
    parts = [files["issue.md"]]
    if strategy != "zero-shot":
        parts.append(files["similar.md"])
        parts += [files[name] for name in context.known_files()]
    parts.append(render("strategy.md.j2", strategy=strategy).strip())
    return system, "\n\n".join(p for p in parts if p)


def shown(context: Context, strategy: Strategy) -> set[int]:
    """The issue numbers a duplicate may name before any tool call."""
    if strategy == "zero-shot":
        return set()
    return {c.issue.number for c in context.candidates}


def parse_answer(data: Any) -> Decision:
    """An engine's answer (a dict or JSON text) as a Decision; a schema failure when malformed."""
    if isinstance(data, str):
        data = _json(data)
    if not isinstance(data, dict):
        raise EngineFailure("the answer is not a JSON object", "schema")
    unknown = sorted(set(data) - set(ANSWER_FIELDS))
    if unknown:
        raise EngineFailure(f"the answer has unknown fields: {', '.join(unknown)}", "schema")
    try:
        lists = ("areas", "topics", "questions", "summary", "files")
        return Decision.model_validate(
            {k: v for k, v in data.items() if not (v is None and k in lists)}
        )
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"])
        raise EngineFailure(f"the answer's {field} is invalid: {err['msg']}", "schema") from None


def _json(text: str) -> Any:
    """JSON text, or the one JSON object inside a reply that wraps it in prose or a fence."""
    try:
        return json.loads(text)
    except RecursionError:
        raise EngineFailure("the answer is not JSON: nested too deep", "schema") from None
    except json.JSONDecodeError as exc:
        start, end = text.find("{"), text.rfind("}")
        if 0 <= start < end:
            try:
                return json.loads(text[start : end + 1])
            except (json.JSONDecodeError, RecursionError):
                pass
        raise EngineFailure(f"the answer is not JSON: {exc.msg}", "schema") from None


def check_answer(data: Any, context: Context, allowed: set[int]) -> Decision:
    """`parse_answer`, then every label in labels.toml and a duplicate among `allowed` numbers."""
    decision = parse_answer(data)
    labels = context.labels
    problems = []
    for group in GROUPS:
        known = set(labels.proposable(group))  # type: ignore[arg-type]
        bad = [n for n in decision.group_labels(group) if n not in known]
        if bad:
            problems.append(f"{group}: {', '.join(map(repr, bad))} not among {sorted(known)}")
    dup = decision.duplicate
    if dup is not None and dup.number not in allowed:
        shown_numbers = ", ".join(f"#{n}" for n in sorted(allowed)) or "none"
        problems.append(
            f"duplicate: #{dup.number} is not an earlier issue you were shown "
            f"(shown: {shown_numbers})"
        )
    if problems:
        raise EngineFailure("the answer is invalid: " + "; ".join(problems), "schema")
    return decision.model_copy(update={"files": known_files(context, decision.files)})


def known_files(context: Context, files: list[str]) -> list[str]:
    """The proposed paths the checkout's code index holds (a suffix names one, as in a stack
    frame); without a code index, none."""
    code = context.code
    if code is None:
        return []
    out: list[str] = []
    for named in files:
        rel = code.resolve(named)
        if rel and rel not in out:
            out.append(rel)
    return out
