"""Thresholds for a target precision: the confidence -> coverage, precision table and the choice.

A table is built from out-of-fold predictions made in time order (fit on the older issues, score
the next ones), so it says how the model did on issues it had not seen, as it will in use.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

THRESHOLDS = tuple(round(0.2 + 0.05 * i, 2) for i in range(16))  # 0.20 .. 0.95
FOLDS = (0.4, 0.6, 0.8, 1.0)
MIN_PROPOSALS = 5


def fold_bounds(n: int) -> list[tuple[int, int]]:
    """(train end, test end) per time-ordered fold: train on [0, a), score [a, b)."""
    cuts = [int(n * f) for f in FOLDS]
    return [(a, b) for a, b in zip(cuts, cuts[1:], strict=False) if a > 0 and b > a]


class ThresholdRow(BaseModel):
    model_config = ConfigDict(extra="forbid")

    threshold: float
    issues: int
    covered: int
    proposals: int
    correct: int
    gold: int

    @property
    def coverage(self) -> float | None:
        return self.covered / self.issues if self.issues else None

    @property
    def precision(self) -> float | None:
        return self.correct / self.proposals if self.proposals else None

    @property
    def recall(self) -> float | None:
        return self.correct / self.gold if self.gold else None


class ThresholdTable(BaseModel):
    """Coverage and precision at each confidence threshold, with the counts behind them."""

    model_config = ConfigDict(extra="forbid")

    rows: list[ThresholdRow]

    def choose(self, target: float, min_proposals: int = MIN_PROPOSALS) -> float | None:
        """The lowest threshold whose precision reaches `target` on enough proposals, or None."""
        for row in self.rows:
            p = row.precision
            if p is not None and row.proposals >= min_proposals and p >= target:
                return row.threshold
        return None

    def at(self, threshold: float | None) -> ThresholdRow | None:
        if threshold is None:
            return None
        return next((r for r in self.rows if abs(r.threshold - threshold) < 1e-9), None)


def proposals(probs: dict[str, float], threshold: float, *, single: bool, limit: int) -> list[str]:
    """The labels proposed at `threshold`: the top one in a single-label group, else up to limit."""
    ranked = sorted(probs.items(), key=lambda kv: (-kv[1], kv[0]))
    if single:
        ranked = ranked[:1]
    return [name for name, p in ranked if p >= threshold][: max(limit, 0)]


def table_for(
    predictions: Sequence[tuple[dict[str, float], list[str]]],
    *,
    single: bool,
    limit: int,
    thresholds: Sequence[float] = THRESHOLDS,
) -> ThresholdTable:
    """The table over (probabilities, gold labels) pairs."""
    rows = []
    gold_total = sum(len(g) for _, g in predictions)
    for t in thresholds:
        covered = made = correct = 0
        for probs, gold in predictions:
            mine = proposals(probs, t, single=single, limit=limit)
            covered += bool(mine)
            made += len(mine)
            correct += len(set(mine) & set(gold))
        rows.append(
            ThresholdRow(
                threshold=t,
                issues=len(predictions),
                covered=covered,
                proposals=made,
                correct=correct,
                gold=gold_total,
            )
        )
    return ThresholdTable(rows=rows)
