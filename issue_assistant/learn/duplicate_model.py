"""The duplicate score fit on a repository's own known duplicates, and its threshold.

Every closed issue with a known original, and a sample of closed issues that are not duplicates,
is replayed a minute after opening; each of its candidates is a pair (the original: positive,
every other: negative) with the features of `index.duplicates`. With at least `MIN_POSITIVES`
known duplicates whose original is among the candidates, a logistic regression (numpy,
`learn/logistic.py`) replaces the hand weights; otherwise the hand weights stay. The threshold
is chosen the same way either way: on time-ordered folds (weights fit on the older issues, the
newer ones scored by the engine's own rule, `duplicates.choose`), the lowest threshold whose
precision reaches the target on enough proposals, and only with `MIN_CALIBRATION_PAIRS` known
duplicates whose original was among the candidates (with fewer, the shared data's prior answers).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from issue_assistant.index import duplicates
from issue_assistant.index.duplicates import PairFeatures
from issue_assistant.learn.confidence import FOLDS, MIN_PROPOSALS
from issue_assistant.tracker.models import Issue

log = logging.getLogger(__name__)

MIN_POSITIVES = 20
# A repository's own threshold needs this many known duplicates whose original was among the
# candidates; with fewer, the prior fit on the shared data answers (`duplicate_prior`).
MIN_CALIBRATION_PAIRS = 10
# The thresholds tried, finer than the label groups' (the score's useful range is narrow).
THRESHOLDS = tuple(round(0.3 + 0.025 * i, 3) for i in range(28))  # 0.300 .. 0.975
DENSE_KEYS = (
    "dense",
    "title",
    "prose",
    "signals",
    "bm25_top",
    "open",
    "age",
    "error",
    "frames",
    "error_open",
    "frames_open",
)
LEXICAL_KEYS = tuple(k for k in DENSE_KEYS if k != "dense")


@dataclass(frozen=True)
class Replayed:
    """One replayed issue: its candidates' numbers and features, and which are its original."""

    created_at: datetime
    duplicate: bool
    pairs: tuple[tuple[int, PairFeatures], ...]
    accept: frozenset[int]
    number: int = 0  # the replayed issue's (for a report a person checks)

    @property
    def positives(self) -> int:
        return sum(1 for n, _ in self.pairs if n in self.accept)

    @property
    def ruled(self) -> bool:
        """A candidate is claimed whatever the threshold: the issue is a report filed again
        (`PairFeatures.refiled`), so it tells nothing of where the threshold belongs."""
        return any(f.refiled and f.claimable for _, f in self.pairs)

    @property
    def calibrates(self) -> bool:
        """A known pair a threshold can be measured on: its original among the candidates, and
        not `ruled`."""
        return bool(self.positives) and not self.ruled


@dataclass(frozen=True)
class Outcome:
    """One replayed issue's candidates as scored (best first), to apply the engine's own rule
    (`duplicates.choose`) at each threshold; `ruled`: a candidate is claimed whatever the
    threshold (the issue is a report filed again, `PairFeatures.refiled`)."""

    scored: tuple[tuple[int, float], ...]
    duplicate: bool
    accept: frozenset[int]
    ruled: bool = False

    def at(self, threshold: float, margin: float) -> tuple[bool, bool]:
        """(proposed, right) at `threshold`."""
        chosen = duplicates.choose(self.scored, threshold, margin)
        return chosen is not None, chosen is not None and chosen[0] in self.accept


def keys_for(replayed: Sequence[Replayed]) -> tuple[str, ...]:
    """The dense cosine is a feature only when every pair has one."""
    pairs = [f for r in replayed for _, f in r.pairs]
    return DENSE_KEYS if pairs and all(f.dense is not None for f in pairs) else LEXICAL_KEYS


def fit_weights(replayed: Sequence[Replayed], keys: tuple[str, ...]) -> dict[str, float] | None:
    """Logistic weights over the pairs, or None with fewer than `MIN_POSITIVES` positives."""
    if sum(r.positives for r in replayed) < MIN_POSITIVES:
        return None
    import numpy as np

    from issue_assistant.learn import logistic
    from issue_assistant.learn.sparse import Dense

    x = np.array([f.row(keys) for r in replayed for _, f in r.pairs], dtype=np.float64)
    y = np.array([1 if n in r.accept else 0 for r in replayed for n, _ in r.pairs])
    if len(set(y.tolist())) < 2:
        return None
    # scikit-learn's LogisticRegression(C=1.0), fit in numpy (learn/logistic.py)
    model = logistic.fit(Dense(x), y, c=1.0, kind="binary", gtol=1e-6, max_iter=1000)
    weights = {"bias": float(model.intercept[0])}
    weights.update({k: float(c) for k, c in zip(keys, model.coef[:, 0], strict=True)})
    return weights


def outcome(r: Replayed, weights: dict[str, float] | None) -> Outcome:
    """`r`'s candidates scored with `weights` (None: the hand weights) as the engine claims:
    0 where evidence does not carry a claim or the pair is a follow-up (`PairFeatures.claim`)."""
    scored = sorted(((n, f.claim(weights)) for n, f in r.pairs), key=lambda ns: -ns[1])
    return Outcome(tuple(scored), r.duplicate, r.accept, r.ruled)


def cross_validated(
    replayed: Sequence[Replayed], learn: bool
) -> tuple[list[Outcome], dict[str, float] | None]:
    """Out-of-fold outcomes in time order, and the weights fit on everything (None: hand)."""
    ordered = sorted(replayed, key=lambda r: r.created_at)
    keys = keys_for(ordered)
    final = fit_weights(ordered, keys) if learn else None
    if final is None:
        return [outcome(r, None) for r in ordered], None
    cuts = [int(len(ordered) * f) for f in FOLDS]
    out: list[Outcome] = []
    for a, b in zip(cuts, cuts[1:], strict=False):
        weights = fit_weights(ordered[:a], keys)
        # a fold without enough known pairs to fit on is scored by the hand weights
        out += [outcome(r, weights) for r in ordered[a:b]]
    return out, final


def choose_threshold(  # noqa: ANN201
    outcomes: Sequence[Outcome], target: float, duplicates_known: int, margin: float
):
    """(rows of (threshold, proposals, correct, false), the chosen threshold or None), each
    threshold applied by the engine's rule with `margin`, over the outcomes a threshold decides
    (not those `ruled`)."""
    outcomes = [o for o in outcomes if not o.ruled]
    rows = []
    for t in THRESHOLDS:
        at = [(o, *o.at(t, margin)) for o in outcomes]
        rows.append(
            (
                t,
                sum(1 for _, proposed, _ in at if proposed),
                sum(1 for o, _, right in at if o.duplicate and right),
                sum(1 for o, proposed, _ in at if proposed and not o.duplicate),
            )
        )
    need = min(MIN_PROPOSALS, max(duplicates_known, 1))
    chosen = next((t for t, p, c, _ in rows if p >= need and c / p >= target), None)
    return rows, chosen


def calibrated_threshold(  # noqa: ANN201
    replayed: Sequence[Replayed],
    outcomes: Sequence[Outcome],
    target: float,
    duplicates_known: int,
    margin: float,
):
    """`choose_threshold` on `outcomes` (of `replayed`), the threshold None unless at least
    `MIN_CALIBRATION_PAIRS` of `replayed` are known pairs a threshold can be measured on
    (`Replayed.calibrates`): with fewer, the prior's threshold answers."""
    rows, chosen = choose_threshold(outcomes, target, duplicates_known, margin)
    if sum(1 for r in replayed if r.calibrates) < MIN_CALIBRATION_PAIRS:
        chosen = None
    return rows, chosen


NEGATIVES = 200  # closed issues that are not known duplicates, sampled as negatives


def negatives(closed: Sequence[Issue], again: Mapping[int, frozenset[int]], n: int) -> list[Issue]:
    """A fixed sample of `n` closed issues that are not duplicates (the calibration's negatives):
    drawn among those neither named nor closed as one, less the reports filed again (`again`),
    which are positives."""
    import random

    from issue_assistant.tracker.duplicates import closed_as_duplicate

    others = [i for i in closed if i.duplicate_of is None and not closed_as_duplicate(i)]
    others.sort(key=lambda i: i.number)
    random.Random(7).shuffle(others)
    return [i for i in others[:n] if i.number not in again]


@dataclass(frozen=True)
class BucketFit:
    """One cutoff's duplicate fit (`BucketDuplicates`): the weights (None: the hand weights),
    the threshold (None: the prior answers), the known duplicates closed before the cutoff, and
    how many of them calibrate (`Replayed.calibrates`; None when too few were known to replay)."""

    weights: dict[str, float] | None = None
    threshold: float | None = None
    known: int = 0
    found: int | None = None

    @property
    def why(self) -> str:
        """Why no threshold was calibrated, in words."""
        if self.found is None or self.found < MIN_CALIBRATION_PAIRS:
            had = "" if self.found is None else f", {self.found} with their original found"
            return (
                f"{self.known} known duplicates closed before this bucket's cutoff{had}: too few "
                f"to calibrate on ({MIN_CALIBRATION_PAIRS} with their original found are needed)"
            )
        return (
            "no threshold reached the target precision on enough proposals, with the "
            f"{self.found} known duplicates with their original found before this bucket's cutoff"
        )


#: how an issue is replayed for its pair features (`pipeline.replay_pairs` on the run's moment):
#: passed in, since replaying builds the issue's context, floors above what is learned here
Replay = Callable[[Issue], Replayed]


class BucketDuplicates:
    """evaluate: the duplicate weights and threshold per cutoff, fit only on what was known then.

    For a cutoff, the positives are issues closed before it as duplicates of a known original
    (reports their reporters filed again among them, `again` from `tracker.duplicates.refiled`),
    the negatives a fixed sample of issues closed otherwise before it; each is replayed at its
    own moment once (the replay cannot see later issues) and reused by every later cutoff.
    """

    def __init__(  # noqa: ANN001
        self,
        tracker,
        index,
        labels,
        config,
        cutoffs: list[datetime],
        replay: Replay,
        again: Mapping[int, frozenset[int]],
    ) -> None:
        from issue_assistant.tracker.duplicates import known_duplicate

        self.tracker, self.index, self.labels, self.config = tracker, index, labels, config
        self.replay = replay
        self.cutoffs = sorted(set(cutoffs))
        self._lock = threading.Lock()
        self._fits: dict[datetime, BucketFit] = {}
        self._replays: dict[int, Replayed] = {}
        last = self.cutoffs[-1] if self.cutoffs else None
        closed = [
            i
            for i in tracker.all_issues()
            if last is not None
            and not i.is_pull_request
            and i.state == "closed"
            and i.closed_at is not None
            and i.closed_at < last
        ]
        self._dups = [i for i in closed if known_duplicate(i, again)]
        self._others = negatives(closed, again, NEGATIVES)

    def _replay(self, issue) -> Replayed:  # noqa: ANN001
        if issue.number not in self._replays:
            self._replays[issue.number] = self.replay(issue)
        return self._replays[issue.number]

    def for_moment(self, moment: datetime) -> BucketFit:
        """The fit of the latest cutoff at or before `moment` (an empty one before any)."""
        before = [c for c in self.cutoffs if c <= moment]
        if not before:
            return BucketFit()
        done = self._fits.get(before[-1])  # fit already (ahead, say): no wait on the lock
        return done if done is not None else self._fit(before[-1])

    def fit_ahead(self, moments: Sequence[datetime]) -> None:
        """Fit the cutoffs of `moments` (the issues' creations, in the order they are analysed)
        in a thread of its own, in the order of first need, beside the analysis (the replays'
        searches and the fits take a core of their own). Each cutoff's fit is the same whoever
        makes it."""
        order: list[datetime] = []
        for moment in moments:
            before = [c for c in self.cutoffs if c <= moment]
            if before and before[-1] not in order:
                order.append(before[-1])

        def work() -> None:
            for cutoff in order:
                try:
                    self._fit(cutoff)
                except Exception as exc:  # noqa: BLE001 - the bucket's first issue fits it again
                    log.warning("duplicate weights for %s, fit ahead: %r", cutoff, exc)
                    return

        if order:
            threading.Thread(target=work, name="duplicates-ahead", daemon=True).start()

    def _fit(self, cutoff: datetime) -> BucketFit:
        with self._lock:
            if cutoff not in self._fits:
                dups = [i for i in self._dups if i.closed_at < cutoff]  # type: ignore[operator]
                if len(dups) < min(MIN_CALIBRATION_PAIRS, MIN_POSITIVES):
                    # too few known pairs for a threshold or weights, whatever the replays say:
                    # the hand weights and the prior answer, and nothing is replayed
                    self._fits[cutoff] = BucketFit(known=len(dups))
                    return self._fits[cutoff]
                others = [i for i in self._others if i.closed_at < cutoff]  # type: ignore[operator]
                replayed = [self._replay(i) for i in dups + others]
                outcomes, weights = cross_validated(replayed, learn=True)
                cfg = self.config.duplicates
                _, chosen = calibrated_threshold(
                    replayed, outcomes, cfg.target_precision, len(dups), cfg.margin
                )
                found = sum(1 for r in replayed if r.calibrates)
                self._fits[cutoff] = BucketFit(weights, chosen, len(dups), found)
            return self._fits[cutoff]
