"""The vote of the most similar training issues, and the choice between it, the model and a blend.

A single-label group (type, priority) proposes from one of three sources, chosen per repository
at fit time on out-of-fold evidence (`learn/folds.py`, the same folds that measure the tiers):
- the model: its probabilities;
- the vote: the `K` most similar labelled training issues (the sum of the TF-IDF blocks' cosines
  in the model's own features), each weighted by the square of its similarity over the best
  one's, as `engines/similar_labels.neighbour_labels` counts the search's neighbours;
- the blend: half of each.
The model is kept unless another source's top label is surely better out of fold: its macro F1
over the group's learned labels beats the model's on the same issues in all but `ALPHA` of
`RESAMPLES` paired bootstrap resamples of them (`surely_better`), a one-sided test that a fold
shuffle cannot pass by luck as a fixed margin could. The tiers are then measured on the chosen
source's out-of-fold predictions, so what they say holds for what is proposed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from issue_assistant.learn.sparse import Csr

SOURCES: dict[str, float] = {"model": 0.0, "blend": 0.5, "vote": 1.0}  # the vote's share
K = 10
# The one-sided test of `surely_better`: at most this share of paired resamples may not favour
# the challenger (split among the challengers when several are tried against one default).
ALPHA = 0.05
RESAMPLES = 2000
RESAMPLE_CHUNK = 250  # resamples drawn at once
TIE = 1e-6  # macro F1s this close are equal (float32 sums)
BOOTSTRAP_SEED = 0
CHUNK = 32  # query rows made dense at once
# From this many query rows the similarities go through one product of the two sparse matrices
# (`Csr.dot_rows`): the out-of-fold votes of a fit, not one new issue's.
MANY = 64
# Similarities are compared to this many decimals: two neighbours equal but for the order in
# which a product summed them are a tie, broken by position, whichever product computed them.
DIGITS = 5


@dataclass
class Neighbours:
    """The training issues' feature rows and, per single-label group, each one's label (None
    when it has none, or more than one)."""

    matrix: Csr
    gold: dict[str, list[str | None]]

    def only(self, groups: Sequence[str]) -> Neighbours:
        """The rows that carry a label of `groups` (what a saved model keeps)."""
        keep = [i for i in range(self.matrix.shape[0]) if any(self.gold[g][i] for g in groups)]
        return Neighbours(
            self.matrix.take(keep), {g: [self.gold[g][i] for i in keep] for g in groups}
        )

    def label_shares(self, group: str, query: Csr, k: int = K) -> list[dict[str, float]]:
        """Each query row's vote for `group`: each label's share of the neighbours' weight ({}
        when fewer than two labelled training issues share a term with it)."""
        gold = self.gold.get(group)
        if gold is None or not query.shape[0]:
            return [{} for _ in range(query.shape[0])]
        labelled = np.flatnonzero([g is not None for g in gold])
        names = [gold[i] for i in labelled]
        known = self.matrix.take(labelled)
        if query.shape[0] >= MANY:
            sims = np.round(query.dot_rows(known), DIGITS)
            return [_label_shares(row, names, k) for row in sims]
        out: list[dict[str, float]] = []
        for start in range(0, query.shape[0], CHUNK):
            dense = query.take(np.arange(start, min(start + CHUNK, query.shape[0]))).toarray()
            sims = known.dot_t(dense) if len(labelled) else dense[:, :0]
            out += [_label_shares(row, names, k) for row in np.round(sims, DIGITS)]
        return out


def _label_shares(sims: np.ndarray, names: Sequence[str | None], k: int) -> dict[str, float]:
    if len(sims) < 2:
        return {}
    top = _top(sims, k)
    best = float(sims[top[0]])
    kept = [i for i in top if sims[i] > 0]
    if best <= 0 or len(kept) < 2:
        return {}
    shares: dict[str, float] = {}
    for i in kept:
        name = names[i]
        assert name is not None
        shares[name] = shares.get(name, 0.0) + (float(sims[i]) / best) ** 2
    total = sum(shares.values())
    return {name: w / total for name, w in shares.items()}


def _top(sims: np.ndarray, k: int) -> np.ndarray:
    """The positions of the `k` largest of `sims`, largest first and ties in position order:
    `np.argsort(-sims, kind="stable")[:k]`, sorting only those at least the k-th largest."""
    if len(sims) <= k:
        return np.argsort(-sims, kind="stable")
    kth = np.partition(sims, len(sims) - k)[len(sims) - k]
    near = np.flatnonzero(sims >= kth)
    return near[np.argsort(-sims[near], kind="stable")][:k]


def rows_matrix(rows: Sequence[tuple[np.ndarray, np.ndarray]], width: int) -> Csr:
    """Sparse rows ((columns, values), `Featurizer.rows`) as one matrix."""
    lengths = np.fromiter((len(c) for c, _ in rows), dtype=np.int64, count=len(rows))
    indptr = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    cols = [c for c, _ in rows] or [np.empty(0)]
    vals = [v for _, v in rows] or [np.empty(0)]
    return Csr(
        indptr,
        np.concatenate(cols).astype(np.int32),
        np.concatenate(vals).astype(np.float32),
        width,
    )


def mix(model: Mapping[str, float], vote: Mapping[str, float], share: float) -> dict[str, float]:
    """`1 - share` of the model's probabilities plus `share` of the vote's shares."""
    if share <= 0:
        return dict(model)
    if share >= 1:
        return dict(vote)
    names = {*model, *vote}
    return {n: (1 - share) * model.get(n, 0.0) + share * vote.get(n, 0.0) for n in names}


def _top_label(probs: Mapping[str, float]) -> str | None:
    """The most probable label (ties to the later name), None without probabilities."""
    return max(probs.items(), key=lambda kv: (kv[1], kv[0]))[0] if probs else None


def macro_f1(
    predictions: Sequence[tuple[Mapping[str, float], Sequence[str]]], names: Sequence[str]
) -> float:
    """Macro F1 over `names` of the top label of each (probabilities, gold) pair; no
    probabilities is a miss."""
    tp = dict.fromkeys(names, 0)
    fp = dict.fromkeys(names, 0)
    fn = dict.fromkeys(names, 0)
    for probs, gold in predictions:
        top = _top_label(probs)
        for n in names:
            if top == n and n in gold:
                tp[n] += 1
            elif top == n:
                fp[n] += 1
            elif n in gold:
                fn[n] += 1
    scores = [2 * tp[n] / (2 * tp[n] + fp[n] + fn[n]) if tp[n] else 0.0 for n in names]
    return sum(scores) / len(scores) if scores else 0.0


Predictions = Sequence[tuple[Mapping[str, float], Sequence[str]]]


def _outcomes(preds: Predictions, names: Sequence[str]) -> np.ndarray:
    """Per issue and label of `names`: (true positive, false positive, false negative) of the
    top label, shape (issues, 3, labels); as `macro_f1` counts them."""
    out = np.zeros((len(preds), 3, len(names)), dtype=np.float32)
    for i, (probs, gold) in enumerate(preds):
        top = _top_label(probs)
        for j, n in enumerate(names):
            if top == n:
                out[i, 0 if n in gold else 1, j] = 1
            elif n in gold:
                out[i, 2, j] = 1
    return out


def _macro_f1s(outcomes: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The macro F1 of each row of `weights` (how often each issue is drawn)."""
    tp, fp, fn = (weights @ outcomes[:, k, :] for k in range(3))
    denom = 2 * tp + fp + fn
    f1 = np.divide(2 * tp, denom, out=np.zeros_like(tp), where=tp > 0)
    return f1.mean(axis=1)


def surely_better(
    challenger: Predictions, default: Predictions, names: Sequence[str], alpha: float = ALPHA
) -> bool:
    """Whether `challenger`'s macro F1 over `names` beats `default`'s on the same issues (paired,
    in order) surely: in at least `1 - alpha` of `RESAMPLES` bootstrap resamples of the issues
    (a fixed seed: the same predictions always give the same answer)."""
    if len(challenger) != len(default):
        raise ValueError(
            f"paired predictions differ in length: {len(challenger)} against {len(default)}"
        )
    if not challenger or not names:
        return False
    ours, theirs = _outcomes(challenger, names), _outcomes(default, names)
    n = len(challenger)
    whole = np.ones((1, n), dtype=np.float32)
    if _macro_f1s(ours, whole)[0] <= _macro_f1s(theirs, whole)[0] + TIE:
        return False
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    not_better = 0
    for start in range(0, RESAMPLES, RESAMPLE_CHUNK):
        b = min(RESAMPLE_CHUNK, RESAMPLES - start)
        drawn = rng.integers(0, n, size=(b, n)) + np.arange(b)[:, None] * n
        weights = np.bincount(drawn.ravel(), minlength=b * n).reshape(b, n).astype(np.float32)
        not_better += int(np.sum(_macro_f1s(ours, weights) <= _macro_f1s(theirs, weights) + TIE))
    return not_better < alpha * RESAMPLES


def choose_source(
    by_source: Mapping[str, Predictions], names: Sequence[str]
) -> tuple[str, dict[str, float]]:
    """The source to propose from, and each source's out-of-fold macro F1: the model unless
    another is `surely_better` (the best of those that are)."""
    scores = {s: round(macro_f1(preds, names), 4) for s, preds in by_source.items()}
    if "model" not in by_source:
        return max(scores, key=lambda s: (scores[s], -SOURCES[s])), scores
    others = [s for s in by_source if s != "model"]
    alpha = ALPHA / max(len(others), 1)
    better = [s for s in others if surely_better(by_source[s], by_source["model"], names, alpha)]
    if not better:
        return "model", scores
    return max(better, key=lambda s: (scores[s], -SOURCES[s])), scores
