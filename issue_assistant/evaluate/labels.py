"""Label measures per group: macro F1, per-label precision/recall/F1, coverage, threshold table,
and for the `similar` engine the tiers (precision and coverage per tier), the thresholds and tier
bounds it used, and why it abstained.

Computed from the per-issue results alone (the proposals and, for the `similar` engine, every
learned label's probability, tier and group outcome), so a report re-renders from the JSONL.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from issue_assistant.decision import TIERS
from issue_assistant.evaluate.metrics import Ratio, engine_labels
from issue_assistant.evaluate.results import IssueResult
from issue_assistant.learn.confidence import THRESHOLDS, proposals

SINGLE = ("type", "priority")
BOUND_ROWS = 12
# Why nothing of a group was proposed, in the words of the comment's "Why" (how to tune it is
# in docs/evaluate.md, not in the report).
WHY = {
    "below floor": "its best guess was right too rarely at its confidence on the repository's "
    "history to propose",
    "tier": "its best guess was less sure than the configuration asks of a proposal",
    "vote": "the vote of similar issues did not agree (or too few were labelled)",
    "none": "no label stood out",
    "": "it proposed one the issue already had",
}


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
class TierLine:
    """One tier: its proposals' precision, and the issues with a proposal at it or above."""

    tier: str
    precision: Ratio
    coverage: Ratio


@dataclass(frozen=True)
class BoundLine:
    """Tier bounds one calibration used for one label ("" a single-label group's top label)."""

    label: str
    method: str
    possible: float | None
    likely: float | None
    high: float | None
    issues: int


@dataclass(frozen=True)
class GroupLabels:
    group: str
    issues: int
    coverage: Ratio
    labels: list[LabelScore]
    thresholds: list[ThresholdLine]
    models: dict[str, int]
    tiers: list[TierLine] = field(default_factory=list)
    bounds: list[BoundLine] = field(default_factory=list)
    # (why, issues): the issues of the group on which the engine proposed nothing.
    abstained: list[tuple[str, int]] = field(default_factory=list)

    @property
    def macro_f1(self) -> float | None:
        scores = [s.f1 for s in self.labels if s.f1 is not None]
        return sum(scores) / len(scores) if scores else None


def _thresholds(rows: Sequence[IssueResult], group: str, limit: int) -> list[ThresholdLine]:
    """Coverage and precision at each of `THRESHOLDS`, up to the first that covers no issue
    (the higher ones cover none either)."""
    scored = [r for r in rows if r.decision.probabilities.get(group)]
    if not scored:
        return []
    out: list[ThresholdLine] = []
    for t in THRESHOLDS:
        if out and not out[-1].coverage.num:
            break
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


def _tiers(rows: Sequence[IssueResult], group: str) -> list[TierLine]:
    """Per tier, the precision of its proposals and the coverage at it or above."""
    made: Counter[str] = Counter()
    right: Counter[str] = Counter()
    best: list[int] = []  # per issue, the index of its best tier (len(TIERS): none)
    any_tier = False
    for r in rows:
        theirs = set(r.gold.group(group))
        top = len(TIERS)
        for name in engine_labels(r, group):
            t = r.decision.tiers.get(name)
            if t is None:
                continue
            any_tier = True
            made[t.tier] += 1
            right[t.tier] += name in theirs
            top = min(top, TIERS.index(t.tier))
        best.append(top)
    if not any_tier:
        return []
    return [
        TierLine(
            tier,
            Ratio(right[tier], made[tier]),
            Ratio(sum(1 for b in best if b <= i), len(rows)),
        )
        for i, tier in enumerate(TIERS)
    ]


def _bounds(rows: Sequence[IssueResult], group: str) -> list[BoundLine]:
    """The tier bounds the engine used, per label, most used first (at most BOUND_ROWS)."""
    counts: Counter[tuple] = Counter()
    for r in rows:
        outcome = r.decision.label_groups.get(group)
        if outcome is None:
            continue
        for label, b in outcome.bounds.items():
            counts[(label, outcome.method, b.possible, b.likely, b.high)] += 1
    ordered = sorted(counts.items(), key=lambda kv: (kv[0][0], -kv[1]))
    return [BoundLine(*key, issues=n) for key, n in ordered[:BOUND_ROWS]]


def _abstained(rows: Sequence[IssueResult], group: str) -> list[tuple[str, int]]:
    counts: Counter[str] = Counter()
    for r in rows:
        if engine_labels(r, group):
            continue
        outcome = r.decision.label_groups.get(group)
        if outcome is None:
            counts["no reason recorded (an engine without tiers, or the group not configured)"] += 1
        else:
            counts[WHY.get(outcome.abstained, outcome.abstained)] += 1
    return counts.most_common()


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
        tiers=_tiers(rows, group),
        bounds=_bounds(rows, group),
        abstained=_abstained(rows, group),
    )


def calibrations(results: Sequence[IssueResult]) -> list[tuple[str, int]]:
    """Which calibrations answered, with how many issues each (most used first)."""
    counts = Counter(r.decision.calibration for r in results if r.decision.calibration)
    return counts.most_common()
