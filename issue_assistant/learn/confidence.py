"""What the history says about the model's confidence: the threshold table and the curve.

Both come from out-of-fold predictions (`learn/folds.py`: each fold model scores issues it was
not fit on), so they say how the model did on issues it had not seen, as it will in use.

- The threshold table: coverage and precision at each confidence threshold (what `calibrate` and
  the evaluate report print).
- The curve: confidence -> precision, smoothed. The pooled (confidence, right?) pairs are fit by
  isotonic regression (pool adjacent violators: precision never falls as confidence rises), and
  adjacent pieces are pooled until each holds at least `MIN_BUCKET` predictions, so no bucket
  hangs on a handful of proposals. Each bucket keeps its counts and a Wilson interval.
  Prediction reads the buckets alone (plain Python, no scikit-learn).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field, model_validator

THRESHOLDS = tuple(round(0.2 + 0.05 * i, 2) for i in range(16))  # 0.20 .. 0.95
FOLDS = (0.4, 0.6, 0.8, 1.0)
MIN_PROPOSALS = 5
# The fewest out-of-fold predictions a curve bucket pools.
MIN_BUCKET = 15
# A single-label group's label with at least this many out-of-fold proposals has a curve of its
# own beside the top label's: its proposals are judged on how often it was right, not on every
# label's (a rare label's wrong low guesses no longer hold a frequent one back, `tiers.choose`).
LABEL_CURVE_MIN = 40
# z of the two-sided 90% Wilson interval reported beside each bucket's precision.
Z90 = 1.6449


def fold_bounds(n: int) -> list[tuple[int, int]]:
    """(train end, test end) per time-ordered fold: train on [0, a), score [a, b)."""
    cuts = [int(n * f) for f in FOLDS]
    return [(a, b) for a, b in zip(cuts, cuts[1:], strict=False) if a > 0 and b > a]


class ThresholdRow(BaseModel):
    model_config = ConfigDict(extra="forbid")

    threshold: float = Field(ge=0, le=1)
    issues: int = Field(ge=0)
    covered: int = Field(ge=0)
    proposals: int = Field(ge=0)
    correct: int = Field(ge=0)
    gold: int = Field(ge=0)

    @model_validator(mode="after")
    def _counts(self) -> ThresholdRow:
        if self.covered > self.issues or self.correct > min(self.proposals, self.gold):
            raise ValueError(f"inconsistent counts at threshold {self.threshold}")
        return self

    @property
    def coverage(self) -> float | None:
        return self.covered / self.issues if self.issues else None

    @property
    def precision(self) -> float | None:
        return self.correct / self.proposals if self.proposals else None

    @property
    def recall(self) -> float | None:
        return self.correct / self.gold if self.gold else None


def wilson(correct: int, n: int, z: float = Z90) -> tuple[float, float]:
    """The Wilson score interval of `correct` right out of `n` (0, 1 when n is 0)."""
    if n <= 0:
        return 0.0, 1.0
    p = correct / n
    centre = p + z * z / (2 * n)
    spread = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    den = 1 + z * z / n
    return max(0.0, (centre - spread) / den), min(1.0, (centre + spread) / den)


class Bucket(BaseModel):
    """Proposals at confidence `low` or more (up to the next bucket), and how many were right."""

    model_config = ConfigDict(extra="forbid")

    low: float = Field(ge=0, le=1)
    proposals: int = Field(ge=1)
    correct: int = Field(ge=0)
    # The mean confidence of its predictions (None in a curve written before it was kept).
    mean: float | None = Field(default=None, ge=0, le=1)

    @model_validator(mode="after")
    def _counts(self) -> Bucket:
        if self.mean is not None and self.mean < self.low - 1e-9:
            raise ValueError(f"bucket at {self.low}: mean confidence {self.mean} under it")
        if self.correct > self.proposals:
            raise ValueError(f"bucket at {self.low}: {self.correct} right of {self.proposals}")
        return self

    @property
    def precision(self) -> float:
        return self.correct / self.proposals

    @property
    def interval(self) -> tuple[float, float]:
        return wilson(self.correct, self.proposals)


class Curve(BaseModel):
    """Confidence -> measured precision: buckets by rising confidence, precision never falling."""

    model_config = ConfigDict(extra="forbid")

    buckets: list[Bucket] = Field(min_length=1)

    @model_validator(mode="after")
    def _monotone(self) -> Curve:
        for a, b in zip(self.buckets, self.buckets[1:], strict=False):
            if not b.low > a.low:
                raise ValueError("curve buckets must rise in confidence")
            if b.correct * a.proposals < a.correct * b.proposals:
                raise ValueError(f"curve precision falls at confidence {b.low}")
        return self

    @property
    def predictions(self) -> int:
        return sum(b.proposals for b in self.buckets)

    def bucket_at(self, confidence: float) -> Bucket | None:
        """The bucket a proposal at `confidence` falls in; None below every measured one (the
        history says nothing of such a low confidence)."""
        found = None
        for b in self.buckets:
            if b.low <= confidence + 1e-12:
                found = b
        return found

    def bound(self, precision: float) -> float | None:
        """The lowest confidence from which the measured precision reaches `precision`."""
        for b in self.buckets:
            if b.precision >= precision - 1e-12:
                return b.low
        return None


def isotonic(values: Sequence[float], weights: Sequence[float] | None = None) -> list[float]:
    """Pool adjacent violators: the non-decreasing fit of `values` (in order) by least squares."""
    w = list(weights) if weights is not None else [1.0] * len(values)
    blocks: list[list[float]] = []  # [weighted sum, weight, count]
    for v, wt in zip(values, w, strict=True):
        blocks.append([v * wt, wt, 1])
        while len(blocks) > 1 and blocks[-2][0] * blocks[-1][1] > blocks[-1][0] * blocks[-2][1]:
            s, wt2, n = blocks.pop()
            blocks[-1][0] += s
            blocks[-1][1] += wt2
            blocks[-1][2] += n
    out: list[float] = []
    for s, wt, n in blocks:
        out += [s / wt] * int(n)
    return out


def fit_curve(pairs: Sequence[tuple[float, bool]], min_bucket: int = MIN_BUCKET) -> Curve | None:
    """The smoothed curve of (confidence, right?) pairs, or None with too few of them."""
    if len(pairs) < min_bucket:
        return None
    ordered = sorted(pairs, key=lambda pc: pc[0])
    # Equal confidences are one point: a bucket never splits them.
    points: list[list[float]] = []  # [confidence, right, count, sum of confidences]
    for conf, right in ordered:
        if points and abs(points[-1][0] - conf) < 1e-12:
            points[-1][1] += right
            points[-1][2] += 1
            points[-1][3] += conf
        else:
            points.append([conf, float(right), 1, conf])
    fitted = isotonic([p[1] / p[2] for p in points], [p[2] for p in points])
    # Pieces of equal fitted precision, as [low, right, count, sum of confidences].
    pieces: list[list[float]] = []
    last = None
    for (conf, right, count, total), value in zip(points, fitted, strict=True):
        if pieces and last is not None and abs(value - last) < 1e-12:
            pieces[-1][1] += right
            pieces[-1][2] += count
            pieces[-1][3] += total
        else:
            pieces.append([conf, right, count, total])
        last = value
    # Pool a piece that is too small with the neighbour nearest in precision (still monotone).
    while len(pieces) > 1:
        small = [i for i, p in enumerate(pieces) if p[2] < min_bucket]
        if not small:
            break
        i = min(small, key=lambda k: pieces[k][2])
        prec = pieces[i][1] / pieces[i][2]
        if i == 0:
            j = 1
        elif i == len(pieces) - 1:
            j = i - 1
        else:
            below = prec - pieces[i - 1][1] / pieces[i - 1][2]
            above = pieces[i + 1][1] / pieces[i + 1][2] - prec
            j = i - 1 if below <= above else i + 1
        a, b = min(i, j), max(i, j)
        pieces[a] = [
            pieces[a][0],
            *(x + y for x, y in zip(pieces[a][1:], pieces[b][1:], strict=True)),
        ]
        del pieces[b]
    return Curve(
        buckets=[
            Bucket(low=low, proposals=int(n), correct=int(right), mean=min(max(total / n, low), 1))
            for low, right, n, total in pieces
        ]
    )


class ThresholdTable(BaseModel):
    """A group's out-of-fold measures: coverage and precision at each confidence threshold (with
    the counts behind them), how the folds were made, and the smoothed curve per label.

    `curves` has, for a single-label group, one curve under the key "" (the top label's
    confidence against its being right) and one under each label proposed at least
    `LABEL_CURVE_MIN` times out of fold (its own proposals alone); for a multi-label group, one
    per learned label (its probability against its being given).
    """

    model_config = ConfigDict(extra="forbid")

    rows: list[ThresholdRow]
    # "time-ordered" or "stratified" (learn/folds.py); "" in a table made from given predictions.
    method: str = ""
    folds: int = Field(default=0, ge=0)
    # Folds not scored for this group: their training part lacked a label the model learns.
    skipped_folds: int = Field(default=0, ge=0)
    predictions: int = Field(default=0, ge=0)
    curves: dict[str, Curve] = Field(default_factory=dict)

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


def curves_for(
    predictions: Sequence[tuple[dict[str, float], list[str]]], *, single: bool
) -> dict[str, Curve]:
    """The curves over (probabilities, gold labels) pairs: "" for a single-label group, and each
    label's own where it has enough proposals; else one per label (its probability against its
    being given)."""
    if single:
        tops = [
            (*max(probs.items(), key=lambda kv: (kv[1], kv[0])), gold)
            for probs, gold in predictions
            if probs
        ]
        curve = fit_curve([(p, name in gold) for name, p, gold in tops])
        if curve is None:
            return {}
        curves = {"": curve}
        for label in sorted({name for name, _, _ in tops}):
            own = [(p, name in gold) for name, p, gold in tops if name == label]
            mine = fit_curve(own) if len(own) >= LABEL_CURVE_MIN else None
            if mine is not None:
                curves[label] = mine
        return curves
    out = {}
    names = sorted({n for probs, _ in predictions for n in probs})
    for name in names:
        pairs = [(probs[name], name in gold) for probs, gold in predictions if name in probs]
        curve = fit_curve(pairs)
        if curve is not None:
            out[name] = curve
    return out


def table_for(
    predictions: Sequence[tuple[dict[str, float], list[str]]],
    *,
    single: bool,
    limit: int,
    thresholds: Sequence[float] = THRESHOLDS,
) -> ThresholdTable:
    """The table over (probabilities, gold labels) pairs, with its curves."""
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
    return ThresholdTable(
        rows=rows, predictions=len(predictions), curves=curves_for(predictions, single=single)
    )
