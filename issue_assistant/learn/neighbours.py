"""The vote of the most similar training issues, and the choice between it, the model and a blend.

A single-label group (type, priority) proposes from one of three sources, chosen per repository
at fit time on out-of-fold evidence (`learn/folds.py`, the same folds that measure the tiers):
- the model: its probabilities;
- the vote: the `K` most similar labelled training issues (the sum of the TF-IDF blocks' cosines
  in the model's own features), each weighted by the square of its similarity over the best
  one's, as `engines/similar_labels.neighbour_labels` counts the search's neighbours;
- the blend: half of each.
The source whose top label has the best out-of-fold macro F1 over the group's learned labels is
kept; the model unless another beats it by `MARGIN`. The tiers are then measured on the chosen
source's out-of-fold predictions, so what they say holds for what is proposed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from issue_assistant.learn.sparse import Csr

SOURCES: dict[str, float] = {"model": 0.0, "blend": 0.5, "vote": 1.0}  # the vote's share
K = 10
MARGIN = 0.02
CHUNK = 32  # query rows made dense at once


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
        out: list[dict[str, float]] = []
        for start in range(0, query.shape[0], CHUNK):
            dense = query.take(np.arange(start, min(start + CHUNK, query.shape[0]))).toarray()
            sims = known.dot_t(dense) if len(labelled) else dense[:, :0]
            out += [_label_shares(row, names, k) for row in sims]
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


def macro_f1(
    predictions: Sequence[tuple[Mapping[str, float], Sequence[str]]], names: Sequence[str]
) -> float:
    """Macro F1 over `names` of the top label of each (probabilities, gold) pair; no
    probabilities is a miss."""
    tp = dict.fromkeys(names, 0)
    fp = dict.fromkeys(names, 0)
    fn = dict.fromkeys(names, 0)
    for probs, gold in predictions:
        top = max(probs.items(), key=lambda kv: (kv[1], kv[0]))[0] if probs else None
        for n in names:
            if top == n and n in gold:
                tp[n] += 1
            elif top == n:
                fp[n] += 1
            elif n in gold:
                fn[n] += 1
    scores = [2 * tp[n] / (2 * tp[n] + fp[n] + fn[n]) if tp[n] else 0.0 for n in names]
    return sum(scores) / len(scores) if scores else 0.0


def choose_source(
    by_source: Mapping[str, Sequence[tuple[Mapping[str, float], Sequence[str]]]],
    names: Sequence[str],
) -> tuple[str, dict[str, float]]:
    """The source to propose from, and each source's out-of-fold macro F1."""
    scores = {s: round(macro_f1(preds, names), 4) for s, preds in by_source.items()}
    best = max(scores, key=lambda s: (scores[s], -SOURCES[s]))
    if best != "model" and scores[best] < scores.get("model", 0.0) + MARGIN:
        best = "model"
    return best, scores
