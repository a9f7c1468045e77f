"""A scriptable engine for tests: `FakeEngine.enqueue(...)` answers, `.history` records."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

from issue_assistant.decision import Decision
from issue_assistant.engines.base import Engine, register
from issue_assistant.errors import EngineError

if TYPE_CHECKING:
    from issue_assistant.context import Context

Answer = Decision | Exception | Callable[["Context"], Decision]


@register
class FakeEngine(Engine):
    """Answers from a queue; with an empty queue it abstains (an empty decision)."""

    name = "fake"
    queue: ClassVar[list[Answer]] = []
    history: ClassVar[list[Context]] = []

    @classmethod
    def enqueue(cls, *answers: Answer) -> None:
        cls.queue.extend(answers)

    @classmethod
    def reset(cls) -> None:
        cls.queue.clear()
        cls.history.clear()

    def decide(self, context: Context) -> Decision:
        type(self).history.append(context)
        answer: Answer = self.queue.pop(0) if self.queue else Decision()
        if isinstance(answer, Exception):
            raise EngineError(str(answer)) from answer
        decision = answer(context) if callable(answer) else answer
        return decision.model_copy(update={"engine": self.name, "model": "fake"})
