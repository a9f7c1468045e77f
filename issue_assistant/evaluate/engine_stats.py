"""What the engine did across a run: strategy, failures by class, cost per issue."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from issue_assistant.engines.failures import KINDS
from issue_assistant.evaluate.results import IssueResult


@dataclass(frozen=True)
class EngineStats:
    strategies: list[str]
    failures: dict[str, int] = field(default_factory=dict)
    cost_per_issue: float | None = None
    cost_max: float | None = None
    cost_unknown: int = 0
    cache_read_tokens: int = 0
    reasks: int = 0
    retries: int = 0
    verify_calls: int = 0

    @property
    def failure_line(self) -> str:
        parts = [f"{n} {k}" for k, n in self.failures.items() if n]
        return ", ".join(parts) if parts else "none"


def engine_stats(results: Sequence[IssueResult]) -> EngineStats:
    usages = [r.decision.usage for r in results]
    by_class = Counter(u.failure for u in usages if u.failure)
    known = [u.cost_usd for u in usages if u.cost_known]
    return EngineStats(
        strategies=sorted({r.decision.strategy for r in results if r.decision.strategy}),
        failures={k: by_class.get(k, 0) for k in KINDS},
        cost_per_issue=sum(known) / len(known) if known else None,
        cost_max=max(known) if known else None,
        cost_unknown=len(usages) - len(known),
        cache_read_tokens=sum(u.cache_read_tokens for u in usages),
        reasks=sum(u.reasks for u in usages),
        retries=sum(u.retries for u in usages),
        verify_calls=sum(u.verify_calls for u in usages),
    )
