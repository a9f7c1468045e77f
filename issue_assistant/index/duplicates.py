"""Is the new issue a duplicate of a candidate? A pairwise score from several signals.

The signals of a (new issue, candidate) pair: dense cosine (when embeddings are on), the BM25
rank, TF-IDF cosine of the cleaned titles and of the prose, the overlap of error lines,
exception names, frames, paths and identifiers, and the candidate's state and age at the moment.
They are combined by a hand-weighted logistic function (too few known duplicate pairs exist to
fit one: 14 in the shared data), so the score lies in (0, 1). `calibrate` fits the threshold for
a target precision by calling `score_candidates`; `choose` applies it, refusing a best candidate
that others match nearly as well (a templated or tracking issue must not flood proposals).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from issue_assistant.index.query import clean_title, problem_text, signals, strip_template
from issue_assistant.index.store import cosine
from issue_assistant.tracker.models import Issue

if TYPE_CHECKING:
    from issue_assistant.context import Candidate, Context
    from issue_assistant.index.store import IssueIndex

# Weights of the logistic score, with and without a dense cosine.
WITH_DENSE = {
    "bias": -7.0,
    "dense": 6.0,
    "title": 2.5,
    "prose": 1.5,
    "signals": 2.0,
    "bm25_top": 0.6,
    "open": 0.4,
    "age": -0.25,
}
LEXICAL = {
    "bias": -5.0,
    "title": 4.0,
    "prose": 3.0,
    "signals": 2.0,
    "bm25_top": 0.8,
    "open": 0.4,
    "age": -0.25,
}
DEFAULT_MARGIN = 0.05


@dataclass(frozen=True)
class PairFeatures:
    dense: float | None
    title: float
    prose: float
    signals: float
    bm25_top: float
    open: float
    age: float

    def score(self) -> float:
        w = WITH_DENSE if self.dense is not None else LEXICAL
        z = w["bias"] + sum(
            w[k] * getattr(self, k) for k in w if k != "bias" and getattr(self, k) is not None
        )
        return 1.0 / (1.0 + math.exp(-z))


def _prose(issue: Issue) -> str:
    return strip_template(issue.body)


def signal_overlap(a: Issue, b: Issue) -> float:
    """Shared error lines and identifiers: Jaccard of the signal sets, error lines counted x2."""
    sa, sb = signals(a.title, a.body), signals(b.title, b.body)
    ka, kb = sa.keys(), sb.keys()
    if not ka or not kb:
        return 0.0
    shared = len(ka & kb) + len({e.lower() for e in sa.errors} & {e.lower() for e in sb.errors})
    return min(1.0, shared / max(1, min(len(ka), len(kb))))


def features(
    index: IssueIndex,
    issue: Issue,
    cand: Candidate,
    *,
    query_vec: np.ndarray | None,
    bm25_best: float,
) -> PairFeatures:
    other = cand.issue
    dense: float | None = None
    if query_vec is not None and index.vectors is not None:
        if cand.dense is not None:
            dense = cand.dense
        else:
            vec = index.vectors.vector(other.number)
            # no vector for the candidate yet: the lexical weights apply
            dense = float(vec @ query_vec) if vec is not None else None
    title = cosine(
        index.vector(clean_title(issue.title), "title"),
        index.vector(clean_title(other.title), "title"),
    )
    prose = cosine(index.vector(_prose(issue)), index.vector(_prose(other)))
    age_days = max((issue.created_at - other.created_at).total_seconds(), 0) / 86400
    return PairFeatures(
        dense=dense,
        title=title,
        prose=prose,
        signals=signal_overlap(issue, other),
        bm25_top=cand.bm25 / bm25_best if bm25_best > 0 else 0.0,
        open=1.0 if other.state == "open" else 0.0,
        age=math.log1p(age_days / 30),
    )


def score_candidates(context: Context, limit: int | None = None) -> list[tuple[Candidate, float]]:
    """Every candidate of the context (or the first `limit`) with its duplicate score, best first.

    `calibrate` fits the threshold on these scores; `choose` applies it.
    """
    from issue_assistant.index.retrieval import Retriever

    cands = [c for c in context.candidates[:limit] if not c.issue.is_pull_request]
    if not cands:
        return []
    index = context.index
    query_vec = None
    if index.vectors is not None and len(index.vectors):
        query_vec = Retriever(index).query_vector(context.issue)
    best = max((c.bm25 for c in cands), default=0.0)
    scored = [
        (c, features(index, context.issue, c, query_vec=query_vec, bm25_best=best).score())
        for c in cands
    ]
    return sorted(scored, key=lambda cs: -cs[1])


def choose(
    scored: list[tuple[Candidate, float]],
    threshold: float,
    margin: float = DEFAULT_MARGIN,
    crowd: int = 2,
) -> tuple[Candidate, float] | None:
    """The best candidate if it clears `threshold`, unless `crowd` or more other candidates
    above the threshold come within `margin` of it (a template many reports share)."""
    if not scored or scored[0][1] < threshold:
        return None
    best = scored[0][1]
    close = [s for _, s in scored[1:] if s >= threshold and best - s < margin]
    if len(close) >= crowd:
        return None
    return scored[0]


def describe(cand: Candidate, score: float) -> str:
    """Why, in one sentence (the comment shows it)."""
    parts = []
    if cand.dense is not None:
        parts.append(f"meaning {cand.dense:.2f}")
    state = cand.issue.state
    via = f" (reached through #{cand.via[0]}, a duplicate of it)" if cand.via else ""
    detail = f" ({', '.join(parts)})" if parts else ""
    return (
        f"It describes the same problem as #{cand.issue.number} ({state}){via}: "
        f"duplicate score {score:.2f}{detail}."
    )


def embedding_text(issue: Issue) -> str:
    """What is embedded for an issue (exposed for the benchmarks)."""
    return problem_text(issue.title, issue.body)
