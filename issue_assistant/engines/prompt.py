"""What every LLM engine sends (the context as system and user prompts) and answer parsing."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from issue_assistant.decision import Decision
from issue_assistant.errors import EngineError

if TYPE_CHECKING:
    from issue_assistant.context import Context

ANSWER_FIELDS = ("type", "areas", "topics", "priority", "duplicate", "questions", "summary")


def prompts(context: Context) -> tuple[str, str]:
    """(system, user): the task, project and labels; then the issue and similar issues, and the
    releases, discussions and likely files where they are known."""
    files = context.files()
    system = "\n\n".join([files["instructions.md"], files["project.md"], files["labels.md"]])
    user = [files["issue.md"], files["similar.md"]]
    user += [files[name] for name in context.known_files()]
    return system, "\n\n".join(user)


def parse_answer(data: Any) -> Decision:
    """An engine's answer (a dict or JSON text) as a Decision; EngineError when it is malformed."""
    if isinstance(data, str):
        try:
            data = json.loads(data)
        except json.JSONDecodeError as exc:
            raise EngineError(f"the answer is not JSON: {exc.msg}") from None
    if not isinstance(data, dict):
        raise EngineError("the answer is not a JSON object")
    unknown = sorted(set(data) - set(ANSWER_FIELDS))
    if unknown:
        raise EngineError(f"the answer has unknown fields: {', '.join(unknown)}")
    try:
        lists = ("areas", "topics", "questions", "summary")
        return Decision.model_validate(
            {k: v for k, v in data.items() if not (v is None and k in lists)}
        )
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"])
        raise EngineError(f"the answer's {field} is invalid: {err['msg']}") from None
