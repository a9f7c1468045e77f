"""Confidence tiers: which learned labels the `similar` engine proposes, and how sure each is.

For each group the model's best label(s) are proposed unless the history says proposals at that
confidence are right less often than `[labels] min_precision` (the floor). The measured precision
of a proposal is that of its bucket on the group's out-of-fold curve (`learn/confidence.py`):
- high: at least `[labels] target_precision`;
- likely: at least halfway between the floor and the target;
- possible: at least the floor.
A single-label group (type, priority) is held under its floor (`[labels] type_min_precision`)
only where the history is sure of it: at a confidence where the buckets from it or from one
above it (`under_floor`), pooled, have the upper end of their 90% interval under the floor. Its
best label is a guess worth showing unless proposals like it were measured wrong: a bucket of 15
out-of-fold predictions right 6 times (0.4, interval 0.22-0.61) no longer decides, so the floor
holds still when the folds are dealt differently; 3 right of 20 (0.06-0.32) still abstains. Such
a proposal is "possible", its measured precision shown as it is.
A group with fewer than `MEASURE_MIN` out-of-fold predictions is not measured: its best label is
proposed as "possible" (a multi-label group's labels whose probability reaches 0.5), and the
comment's "Why" says so once. `[labels] propose` keeps only proposals of that tier or higher.

A multi-label group (area, topic) holds each label to its own evidence: a label is proposed at a
confidence only where the lower end of the 90% interval of its own out-of-fold precision there
reaches the floor (the tier likewise: high only where that lower end reaches the target), and
where at least `MIN_LABEL_EVIDENCE` of its out-of-fold predictions had that confidence or more.
A few lucky predictions (9 right of 15: 0.6, interval 0.39-0.78) no longer make a label
proposable; a label seen 40 times right of 40 at that confidence is (0.94-1.00).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from issue_assistant.config.sections import LabelModelConfig
from issue_assistant.decision import TIERS, Bounds, LabelTier, Tier, in_tenths
from issue_assistant.learn.confidence import Curve, ThresholdTable, wilson

# Fewer out-of-fold predictions than this measure nothing reliable: on held-out windows of
# hf-datasets (never the benchmark's scored ones), curves from 76-93 predictions (100 labelled
# issues) gave a high tier right 0.86-0.95 of the time and abstained on issues right 0.53-0.79 of
# the time; from 159-261 predictions, high 0.91-0.99 and abstentions at 0.32-0.67.
MEASURE_MIN = 150
UNMEASURED_MULTI = 0.5
# A label of a multi-label group needs this many out-of-fold predictions at its confidence or
# more to be proposed there: with 20, a bucket wholly right has an interval from 0.87.
MIN_LABEL_EVIDENCE = 20


@dataclass(frozen=True)
class TierRule:
    """The floor, the bounds between tiers and the lowest tier proposed; `single_floor`: the
    floor of the groups that take one label (type, priority), `floor` when None."""

    floor: float
    target: float
    propose: Tier = "possible"
    single_floor: float | None = None

    @classmethod
    def of(cls, config: LabelModelConfig) -> TierRule:
        return cls(
            config.min_precision,
            config.target_precision,
            config.propose,
            config.type_min_precision,
        )

    @property
    def likely(self) -> float:
        return (self.floor + self.target) / 2

    def floor_of(self, single: bool) -> float:
        return self.single_floor if single and self.single_floor is not None else self.floor

    def tier(self, precision: float, single: bool = False) -> Tier | None:
        if precision >= self.target - 1e-12:
            return "high"
        if precision >= max(self.likely, self.floor_of(single)) - 1e-12:
            return "likely"
        if precision >= self.floor_of(single) - 1e-12:
            return "possible"
        return None

    def allows(self, tier: Tier) -> bool:
        return TIERS.index(tier) <= TIERS.index(self.propose)

    def bounds(self, curve: Curve, *, per_label: bool = False) -> Bounds:
        """The confidence from which each tier starts (`per_label`: by a multi-label group's
        rule, `label_precision`; else a single-label group's, `under_floor`)."""
        if not per_label:
            under = under_floor(curve, self.floor_of(True))
            start = next((b.low for b, u in zip(curve.buckets, under, strict=True) if not u), None)
            return Bounds(
                possible=start,
                likely=curve.bound(max(self.likely, self.floor_of(True))),
                high=curve.bound(self.target),
            )

        def bound(precision: float) -> float | None:
            for i, b in enumerate(curve.buckets):
                sure = label_precision(curve, i)
                if sure is not None and sure >= precision - 1e-12:
                    return b.low
            return None

        return Bounds(
            possible=bound(self.floor), likely=bound(self.likely), high=bound(self.target)
        )


def proposed_record(curve: Curve, start: float | None) -> tuple[int, int] | None:
    """(right, predictions) out of fold at confidence `start` or more: the measured precision of
    a label where it is proposed (`calibrate` reports it per label); None where it never is."""
    if start is None:
        return None
    kept = [b for b in curve.buckets if b.low >= start - 1e-12]
    return sum(b.correct for b in kept), sum(b.proposals for b in kept)


def under_floor(curve: Curve, floor: float) -> list[bool]:
    """Per bucket of a single-label group's curve, whether the history is sure proposals there
    are right less often than `floor`: the upper end of the 90% interval of a run of buckets from
    it or above it, pooled, is under the floor (precision never falls as confidence rises, so what
    is surely under the floor there is under it at a lower confidence too)."""
    bs = curve.buckets
    sure = [False] * len(bs)
    for j in range(len(bs)):
        right = made = 0
        for k in range(j, len(bs)):
            right, made = right + bs[k].correct, made + bs[k].proposals
            if wilson(right, made)[1] < floor - 1e-12:
                sure[j] = True
                break
    return [any(sure[i:]) for i in range(len(bs))]


def label_precision(curve: Curve, i: int) -> float | None:
    """What a multi-label group's label is held to at bucket `i` of its curve: the lower end of
    the bucket's 90% interval; None when that bucket and those above it hold fewer than
    `MIN_LABEL_EVIDENCE` out-of-fold predictions."""
    if sum(b.proposals for b in curve.buckets[i:]) < MIN_LABEL_EVIDENCE:
        return None
    return curve.buckets[i].interval[0]


@dataclass
class Choice:
    """A group's proposals (name, confidence, tier), or why none; and the tier bounds."""

    chosen: list[tuple[str, float, LabelTier]] = field(default_factory=list)
    abstained: str = ""  # "below floor", "tier", "none"
    reason: str = ""
    measured: bool = True
    bounds: dict[str, Bounds] = field(default_factory=dict)
    # When none was chosen: the best guess and what was measured at its confidence (None: a
    # confidence under every one measured), for the plain words of the comment's "Why".
    guess: str = ""
    guess_info: LabelTier | None = None


def measured(table: ThresholdTable | None) -> bool:
    return table is not None and table.predictions >= MEASURE_MIN and bool(table.curves)


def _tier_of(
    curve: Curve, confidence: float, rule: TierRule, per_label: bool = False
) -> tuple[Tier | None, LabelTier | None]:
    """The tier at `confidence` (None: under the floor) and what was measured there (None: a
    confidence under every one measured); `per_label`: a multi-label group's label, held to
    `label_precision`."""
    under = [] if per_label else under_floor(curve, rule.floor_of(True))
    b = curve.bucket_at(confidence)
    if b is None:
        # Under the lowest bucket: precision is at most that bucket's (it never falls as
        # confidence rises), which says "under the floor" when that bucket is; else unknown.
        first = curve.buckets[0]
        below = under[0] if under else rule.tier(first.precision) is None
        if not below:
            return None, None
        b = first
    low, high = b.interval
    if per_label:
        sure = label_precision(curve, curve.buckets.index(b))
        tier = rule.tier(sure) if sure is not None else None
    elif under[curve.buckets.index(b)]:
        tier = None
    else:
        tier = rule.tier(b.precision, single=True) or "possible"
    info = LabelTier(
        tier=tier or "possible",
        precision=round(b.precision, 4),
        lower=round(low, 4),
        upper=round(high, 4),
        correct=b.correct,
        proposals=b.proposals,
    )
    return tier, info


def _unmeasured(probs: dict[str, float], single: bool, limit: int, rule: TierRule) -> Choice:
    ranked = sorted(probs.items(), key=lambda kv: (-kv[1], kv[0]))
    names = ranked[:1] if single else [(n, p) for n, p in ranked if p >= UNMEASURED_MULTI]
    possible = LabelTier(tier="possible")
    if not rule.allows("possible"):
        return Choice(abstained="tier", reason="not measured yet", measured=False)
    if not names:
        why = f"no label reaches probability {UNMEASURED_MULTI:.1f}"
        return Choice(abstained="none", reason=why, measured=False)
    return Choice([(n, p, possible) for n, p in names[: max(limit, 0)]], measured=False)


def _single_curve(table: ThresholdTable, name: str, confidence: float, rule: TierRule) -> Curve:
    """The curve a single-label group's proposal of `name` is judged on: the label's own, where
    it was proposed often enough out of fold (`confidence.LABEL_CURVE_MIN`) and at this
    confidence, or lower and surely under the floor there; else the top label's."""
    own = table.curves.get(name)
    if own is not None and (
        own.bucket_at(confidence) is not None or under_floor(own, rule.floor_of(True))[0]
    ):
        return own
    return table.curves[""]


def choose(
    table: ThresholdTable | None,
    probs: dict[str, float],
    *,
    single: bool,
    limit: int,
    rule: TierRule,
) -> Choice:
    """The labels of one learned group to propose for one issue (`probs`: each label's)."""
    if not probs:
        return Choice(abstained="none", reason="the model gave no probabilities")
    if not measured(table):
        return _unmeasured(probs, single, limit, rule)
    assert table is not None
    bounds = {key: rule.bounds(curve, per_label=not single) for key, curve in table.curves.items()}
    if single:
        name, p = max(probs.items(), key=lambda kv: (kv[1], kv[0]))
        tier, info = _tier_of(_single_curve(table, name, p, rule), p, rule)
        if tier is not None and info is not None and rule.allows(tier):
            return Choice([(name, p, info)], bounds=bounds)
        return Choice(
            abstained="below floor" if tier is None else "tier",
            reason=_why_not(name, p, info, tier, rule),
            bounds=bounds,
            guess=name,
            guess_info=info,
        )
    scored = []
    for name, p in probs.items():
        curve = table.curves.get(name)
        if curve is None:
            continue
        tier, info = _tier_of(curve, p, rule, per_label=True)
        scored.append((name, p, tier, info))
    kept = [
        (n, p, info)
        for n, p, tier, info in scored
        if tier is not None and info is not None and rule.allows(tier)
    ]
    kept.sort(key=lambda c: (-(c[2].precision or 0.0), -c[1], c[0]))
    if kept:
        return Choice(kept[: max(limit, 0)], bounds=bounds)
    if not scored:
        return Choice(abstained="none", reason="no label was measured", bounds=bounds)
    name, p, tier, info = max(
        scored, key=lambda c: ((c[3].precision or 0.0) if c[3] else -1.0, c[1], c[0])
    )
    return Choice(
        abstained="below floor" if tier is None else "tier",
        reason=_why_not(name, p, info, tier, rule, per_label=True),
        bounds=bounds,
        guess=name,
        guess_info=info,
    )


def _why_not(
    name: str,
    p: float,
    info: LabelTier | None,
    tier: Tier | None,
    rule: TierRule,
    per_label: bool = False,
) -> str:
    if info is None:
        return f"the best guess `{name}` has a confidence ({p:.2f}) under any measured here"
    right = f"right {in_tenths(info.precision or 0.0)} in 10 times at its confidence"
    if tier is None:
        floor = in_tenths(rule.floor_of(not per_label))
        if per_label and (info.precision or 0.0) >= rule.floor - 1e-12:
            return (
                f"the best guess `{name}` was {right}, on too few earlier issues to be sure of "
                f"{floor} in 10"
            )
        return f"the best guess `{name}` is {right}, under the floor of {floor} in 10"
    return f"the best guess `{name}` is only {tier} ({right}); [labels] propose = {rule.propose}"
