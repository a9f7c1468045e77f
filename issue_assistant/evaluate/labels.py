"""Label measures per group: macro F1, per-label precision/recall/F1, coverage, threshold table.

Computed from the per-issue results alone (the proposals and, for the `similar` engine, every
learned label's probability), so a report re-renders from the JSONL.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from issue_assistant.evaluate.metrics import Ratio, engine_labels
from issue_assistant.evaluate.results import IssueResult
from issue_assistant.learn.calibration import THRESHOLDS, proposals

SINGLE = ("type", "priority")


@dataclass(frozen=True)
class LabelScore:
    label: str
    precision: Ratio
    recall: Ratio

    @property
    def f1(self) -> float | None:
        p, r = self.precision.share, self.recall.share
        if p is None or r is None:
            return 0.0 if (self.precision.den or self.recall.den) else None
        return 2 * p * r / (p + r) if p + r else 0.0


@dataclass(frozen=True)
class ThresholdLine:
    threshold: float
    coverage: Ratio
    precision: Ratio


@dataclass(frozen=True)
class GroupLabels:
    group: str
    issues: int
    coverage: Ratio
    labels: list[LabelScore]
    thresholds: list[ThresholdLine]
    models: dict[str, int]

    @property
    def macro_f1(self) -> float | None:
        scores = [s.f1 for s in self.labels if s.f1 is not None]
        return sum(scores) / len(scores) if scores else None


def _thresholds(rows: Sequence[IssueResult], group: str, limit: int) -> list[ThresholdLine]:
    scored = [r for r in rows if r.decision.probabilities.get(group)]
    if not scored:
        return []
    out = []
    for t in THRESHOLDS:
        covered = made = right = 0
        for r in scored:
            present = set(r.gold.present)
            probs = {n: p for n, p in r.decision.probabilities[group].items() if n not in present}
            mine = proposals(probs, t, single=group in SINGLE, limit=limit)
            covered += bool(mine)
            made += len(mine)
            right += len(set(mine) & set(r.gold.group(group)))
        out.append(ThresholdLine(t, Ratio(covered, len(scored)), Ratio(right, made)))
    return out


def group_labels(results: Sequence[IssueResult], group: str, limit: int = 3) -> GroupLabels:
    """The measures of `group` over the issues people gave a label of it after opening."""
    rows = [r for r in results if r.gold.group(group)]
    proposed: Counter[str] = Counter()
    given: Counter[str] = Counter()
    hits: Counter[str] = Counter()
    covered = 0
    for r in rows:
        mine, theirs = set(engine_labels(r, group)), set(r.gold.group(group))
        covered += bool(mine)
        proposed.update(mine)
        given.update(theirs)
        hits.update(mine & theirs)
    names = sorted(set(proposed) | set(given))
    scores = [LabelScore(n, Ratio(hits[n], proposed[n]), Ratio(hits[n], given[n])) for n in names]
    models = Counter(r.decision.label_model.get(group, "") for r in rows)
    models.pop("", None)
    return GroupLabels(
        group=group,
        issues=len(rows),
        coverage=Ratio(covered, len(rows)),
        labels=scores,
        thresholds=_thresholds(rows, group, 1 if group in SINGLE else limit),
        models=dict(models),
    )


def calibrations(results: Sequence[IssueResult]) -> list[tuple[str, int]]:
    """Which calibrations answered, with how many issues each (most used first)."""
    counts = Counter(r.decision.calibration for r in results if r.decision.calibration)
    return counts.most_common()
