"""Scriptable engines for tests.

`fake`: `FakeEngine.enqueue(...)` whole decisions (or exceptions, or callables); `.history`
records the contexts. `fake-llm`: an LLMEngine whose model is a queue of raw replies (dicts,
JSON text, or exceptions), so the shared LLM path (re-ask, verification, usage) runs for real.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from issue_assistant.decision import Decision
from issue_assistant.engine_registry import register
from issue_assistant.engines.base import Deadline, Engine
from issue_assistant.engines.failures import EngineFailure
from issue_assistant.engines.llm import LLMEngine, Run
from issue_assistant.errors import EngineError

if TYPE_CHECKING:
    from issue_assistant.context import Context

Answer = Decision | Exception | Callable[["Context"], Decision]


@register
class FakeEngine(Engine):
    """Answers from a queue; with an empty queue it abstains (an empty decision)."""

    name = "fake"
    strategies = ("zero-shot", "rag", "agent")
    queue: ClassVar[list[Answer]] = []
    history: ClassVar[list[Context]] = []
    deadlines: ClassVar[list[Deadline]] = []  # each decide's deadline (a callable may wait on it)

    @classmethod
    def enqueue(cls, *answers: Answer) -> None:
        cls.queue.extend(answers)

    @classmethod
    def reset(cls) -> None:
        cls.queue.clear()
        cls.history.clear()
        cls.deadlines.clear()
        FakeLLM.replies.clear()
        FakeLLM.prompts.clear()

    def decide(self, context: Context) -> Decision:
        type(self).history.append(context)
        type(self).deadlines.append(self.deadline)
        answer: Answer = self.queue.pop(0) if self.queue else Decision()
        if isinstance(answer, EngineError):
            raise answer
        if isinstance(answer, Exception):
            raise EngineError(str(answer)) from answer
        decision = answer(context) if callable(answer) else answer
        return decision.model_copy(update={"engine": self.name, "model": "fake"})


@register
class FakeLLM(LLMEngine):
    """The LLM path with a scripted model: each call pops one reply (10 tokens in, 5 out).

    A reply is a dict, JSON text, an exception to raise, or a callable of the context.
    """

    name = "fake-llm"
    default_strategy = "rag"
    replies: ClassVar[list[Any]] = []
    prompts: ClassVar[list[tuple[str, str]]] = []

    @property
    def model(self) -> str:
        return "fake-llm"

    def _next(self, run: Run, kind: str, text: str) -> Any:
        type(self).prompts.append((kind, text))
        run.add(tokens_in=10, tokens_out=5, turns=1 if kind != "verify" else 0)
        reply = self.replies.pop(0) if self.replies else EngineFailure("no reply", "unknown")
        if isinstance(reply, Exception):
            raise reply
        return reply(run.context) if callable(reply) else reply

    def complete(self, run: Run, system: str, user: str) -> Any:
        return self._next(run, "answer", user)

    def reask(self, run: Run, error: str) -> Any:
        return self._next(run, "reask", error)

    def yes_no(self, run: Run, prompt: str) -> Any:
        return self._next(run, "verify", prompt)
