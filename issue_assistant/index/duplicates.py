"""Is the new issue a duplicate of a candidate? A pairwise score from several signals.

The signals of a (new issue, candidate) pair: dense cosine (when embeddings are on), the BM25
rank, TF-IDF cosine of the cleaned titles and of the prose, the overlap of error lines,
exception names, frames, paths and identifiers, and the candidate's state and age at the moment.
They are combined by a hand-weighted logistic function (too few known duplicate pairs exist to
fit one: 14 in the shared data), so the score lies in (0, 1). `calibrate` fits the threshold for
a target precision by calling `score_candidates`; `choose` applies it, refusing a best candidate
that others match nearly as well (a templated or tracking issue must not flood proposals).

The prose and signals are read without the repository's boilerplate lines (an unfilled Markdown
template, `index/boilerplate.py`), and an issue without words of its own (a title like "Hi" over
an untouched template, `has_own_words`) is never called a duplicate.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from issue_assistant.index.query import (
    _URL,
    STOPWORDS,
    Signals,
    clean_title,
    problem_text,
    signals,
    strip_template,
)
from issue_assistant.index.store import cosine
from issue_assistant.tracker.models import Issue

if TYPE_CHECKING:
    from datetime import datetime

    from issue_assistant.context import Candidate, Context
    from issue_assistant.index.boilerplate import Boilerplate
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
T = TypeVar("T")  # what `choose` picks among: candidates, or their numbers
MIN_OWN_WORDS = 3


@dataclass(frozen=True)
class PairFeatures:
    dense: float | None
    title: float
    prose: float
    signals: float
    bm25_top: float
    open: float
    age: float

    def score(self, weights: dict[str, float] | None = None) -> float:
        """The logistic score: `calibrate`'s fitted weights when given (and usable for this
        pair: fitted with a dense cosine the pair lacks, they are not), else the hand weights."""
        w = weights
        if w is None or ("dense" in w and self.dense is None):
            w = WITH_DENSE if self.dense is not None else LEXICAL
        z = w["bias"] + sum(
            w[k] * getattr(self, k) for k in w if k != "bias" and getattr(self, k) is not None
        )
        return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))

    def row(self, keys: tuple[str, ...]) -> list[float]:
        """The values of `keys`, for fitting weights."""
        return [float(getattr(self, k) or 0.0) for k in keys]


def own_body(issue: Issue, boiler: Boilerplate | None, moment: datetime | None) -> str:
    """The body without the lines that were boilerplate at `moment`."""
    return boiler.strip(issue.body or "", moment) if boiler is not None else issue.body or ""


_OWN_WORD = re.compile(r"\w{2,}")


def _own_words(text: str) -> set[str]:
    """Words in any script (a run of CJK characters counts as one), stop words and numbers out."""
    words = (w.lower() for w in _OWN_WORD.findall(_URL.sub(" ", text)))
    return {w for w in words if w not in STOPWORDS and not w.isdigit()}


def has_own_words(issue: Issue, body: str) -> bool:
    """Whether the issue says something of its own: a word in its cleaned title, and
    `MIN_OWN_WORDS` distinct words (or 12 letters) in the title and prose together ("Hi" over
    an untouched template: no)."""
    title = _own_words(clean_title(issue.title))
    both = title | _own_words(strip_template(body))
    return bool(title) and (len(both) >= MIN_OWN_WORDS or sum(map(len, both)) >= 12)


@dataclass(frozen=True)
class Side:
    """What the pair features read of one issue, computed once per issue (the new issue's side
    serves every candidate): its body without boilerplate, title and prose TF-IDF, signals."""

    body: str
    title: dict[str, float]
    prose: dict[str, float]
    signals: Signals


def side(
    index: IssueIndex, issue: Issue, boiler: Boilerplate | None, moment: datetime | None
) -> Side:
    body = own_body(issue, boiler, moment)
    return Side(
        body=body,
        title=index.vector(clean_title(issue.title), "title"),
        prose=index.vector(strip_template(body)),
        signals=signals(issue.title, body),
    )


def signal_overlap(sa: Signals, sb: Signals) -> float:
    """Shared error lines and identifiers: Jaccard of the signal sets, error lines counted x2."""
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
    boiler: Boilerplate | None = None,
    moment: datetime | None = None,
    mine: Side | None = None,
) -> PairFeatures:
    """The features of (`issue`, `cand`); `mine`: the issue's side, when already computed."""
    other = cand.issue
    mine = mine or side(index, issue, boiler, moment)
    theirs = side(index, other, boiler, moment)
    dense: float | None = None
    if query_vec is not None and index.vectors is not None:
        if cand.dense is not None:
            dense = cand.dense
        else:
            vec = index.vectors.vector(other.number)
            # no vector for the candidate yet: the lexical weights apply
            dense = float(vec @ query_vec) if vec is not None else None
    age_days = max((issue.created_at - other.created_at).total_seconds(), 0) / 86400
    return PairFeatures(
        dense=dense,
        title=cosine(mine.title, theirs.title),
        prose=cosine(mine.prose, theirs.prose),
        signals=signal_overlap(mine.signals, theirs.signals),
        bm25_top=cand.bm25 / bm25_best if bm25_best > 0 else 0.0,
        open=1.0 if other.state == "open" else 0.0,
        age=math.log1p(age_days / 30),
    )


def score_candidates(
    context: Context, limit: int | None = None, weights: dict[str, float] | None = None
) -> list[tuple[Candidate, float]]:
    """Every candidate of the context (or the first `limit`) with its duplicate score, best first.

    `calibrate` fits the threshold (and, with enough known pairs, the weights) on these scores;
    `choose` applies it.
    """
    scored = [(c, f.score(weights)) for c, f in pair_features(context, limit)]
    return sorted(scored, key=lambda cs: -cs[1])


def pair_features(
    context: Context, limit: int | None = None
) -> list[tuple[Candidate, PairFeatures]]:
    """Each candidate with its pair features; none when the issue says nothing of its own."""
    from issue_assistant.index.retrieval import Retriever

    cands = [c for c in context.candidates[:limit] if not c.issue.is_pull_request]
    if not cands:
        return []
    index = context.index
    boiler = index.boilerplate()
    mine = side(index, context.issue, boiler, context.as_of)
    if not has_own_words(context.issue, mine.body):
        return []
    query_vec = None
    if index.vectors is not None and len(index.vectors):
        query_vec = Retriever(index).query_vector(context.issue)
    best = max((c.bm25 for c in cands), default=0.0)
    return [
        (
            c,
            features(
                index,
                context.issue,
                c,
                query_vec=query_vec,
                bm25_best=best,
                boiler=boiler,
                moment=context.as_of,
                mine=mine,
            ),
        )
        for c in cands
    ]


def choose(
    scored: Sequence[tuple[T, float]],
    threshold: float,
    margin: float = DEFAULT_MARGIN,
    crowd: int = 2,
) -> tuple[T, float] | None:
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
