"""The base of engines that call a language model in-process (`llama`, `anthropic`).

One path for all of them: prompts (per strategy) -> the model (`complete`) -> parse and check
-> one re-ask quoting the validation error (`reask`) -> duplicate verification (`yes_no`) ->
the decision stamped with engine, model, strategy and usage. A subclass implements the three
model calls; `Run` carries the conversation state and the usage between them.
"""

from __future__ import annotations

import json
import time
from abc import abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import Field

from issue_assistant.decision import Decision, Usage
from issue_assistant.engines import prices
from issue_assistant.engines.base import Deadline, Engine, EngineOptions
from issue_assistant.engines.failures import EngineFailure, kind_of
from issue_assistant.engines.prompt import check_answer, prompts, shown
from issue_assistant.render import render

if TYPE_CHECKING:
    from issue_assistant.context import Context


class LLMOptions(EngineOptions):
    """Options every LLM engine has."""

    verify_duplicates: bool = Field(
        default=True, description="ask, in a second short call, whether a duplicate is real"
    )


@dataclass
class Run:
    """One issue's conversation with the model: state for the subclass, usage for everyone."""

    context: Context
    deadline: Deadline
    budget_usd: float
    allowed: set[int]
    usage: Usage = field(default_factory=Usage)
    state: dict[str, Any] = field(default_factory=dict)
    searched: int = 0

    def add(self, **counts: Any) -> None:
        """Add to the usage: numbers are summed, other values replaced."""
        update = {}
        for key, value in counts.items():
            old = getattr(self.usage, key)
            summed = isinstance(value, int | float) and not isinstance(value, bool)
            update[key] = old + value if summed else value
        self.usage = self.usage.model_copy(update=update)

    def spent(self) -> bool:
        """The budget is used up (a known cost at or over `[engine] budget_usd`)."""
        return self.usage.cost_usd >= self.budget_usd

    def time_low(self) -> bool:
        """Little of the issue's time is left: answer now from what was gathered."""
        return self.deadline.remaining() < min(30.0, self.deadline.seconds / 4)


class LLMEngine(Engine):
    """prompts -> model -> parse -> one re-ask -> verify the duplicate -> stamp."""

    uses_llm = True
    Options = LLMOptions
    options: LLMOptions
    strategies = ("zero-shot", "rag", "agent")
    provider: ClassVar[str] = ""

    @abstractmethod
    def complete(self, run: Run, system: str, user: str) -> Any:
        """The model's answer (a dict or JSON text) to the prompts; EngineFailure when it fails."""

    @abstractmethod
    def reask(self, run: Run, error: str) -> Any:
        """The model's second answer, after being told `error` about its first."""

    @abstractmethod
    def yes_no(self, run: Run, prompt: str) -> Any:
        """A short, separate call answering `{"same": bool, "reason": str}` to `prompt`."""

    def decide(self, context: Context) -> Decision:
        run = Run(
            context=context,
            deadline=self.deadline,
            budget_usd=self.config.engine.budget_usd,
            allowed=shown(context, self.strategy),
        )
        start = time.perf_counter()
        system, user = prompts(context, self.strategy)
        try:
            raw = self.complete(run, system, user)
            try:
                decision = check_answer(raw, context, run.allowed)
            except EngineFailure as exc:
                if exc.kind != "schema":
                    raise
                run.add(reasks=1)
                decision = check_answer(self.reask(run, str(exc)), context, run.allowed)
            decision = self._verify(run, decision)
        except EngineFailure as exc:
            exc.usage = run.usage
            raise
        run.add(latency_s=time.perf_counter() - start)
        return decision.model_copy(
            update={
                "engine": self.name,
                "model": self.model,
                "strategy": self.strategy,
                "usage": run.usage,
            }
        )

    def price(self, run: Run, tokens_in: int, tokens_out: int, **cache: int) -> None:
        """Count one call's tokens and its cost (unknown prices are flagged, not zero)."""
        dollars = prices.cost(self.model, self.provider, tokens_in, tokens_out, **cache)
        run.add(
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            cache_read_tokens=cache.get("cache_read", 0),
            cache_write_tokens=cache.get("cache_write", 0),
            cost_usd=dollars or 0.0,
        )
        if dollars is None:
            run.add(cost_known=False)

    def _verify(self, run: Run, decision: Decision) -> Decision:
        """Keep a duplicate only when a separate call says it shares the root cause."""
        dup = decision.duplicate
        if dup is None or not self.options.verify_duplicates:
            return decision
        context = run.context
        old = context.moment.get_issue(dup.number, context.issue)
        if old is None:
            return decision.model_copy(update={"duplicate": None})
        prompt = render("verify.md.j2", repository=context.repository, new=context.issue, old=old)
        run.add(verify_calls=1)
        try:
            answer = self.yes_no(run, prompt)
            data = json.loads(answer) if isinstance(answer, str) else answer
            same = data.get("same") is True
        except (EngineFailure, ValueError, AttributeError) as exc:
            # Unsure is no: a duplicate nobody confirmed is not proposed.
            if kind_of(exc) == "setup":
                raise
            same = False
        return decision if same else decision.model_copy(update={"duplicate": None})
