"""TF-IDF features fit in numpy: the title and the prose as separate blocks of word and char grams.

The arithmetic is scikit-learn's `TfidfVectorizer` (its analyzers, `min_df`, `max_features`,
smooth idf, sublinear tf, l2 norm per block, a weight per block), so `tests/test_logistic.py`
can check these features against scikit-learn's on the shared data; scikit-learn is only that
test's reference. Each text is analysed once per `TermCache` (the term ids are shared by every fit
that uses the cache): the cross-validation folds of one fit, and evaluate's time buckets, analyse
an issue once instead of once per fit.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from issue_assistant.learn.linear import Featurizer, TextPart
from issue_assistant.learn.sparse import Csr, hstack
from issue_assistant.learn.text import Doc

TOKEN = r"(?u)\b\w\w+\b"
# the blocks a history may have no term of (then left out)
OPTIONAL = ("cues", "form", "comments")


@dataclass(frozen=True)
class PartSpec:
    """One block of features: which column of a `Doc` (title, prose, form terms), how it is cut,
    how many terms."""

    name: str
    column: int
    # "word", "char_wb", "cues" (`learn/cues.py`), "form" or "comments" (`learn/form_terms.py`)
    analyzer: str
    ngram: tuple[int, int]
    min_df: int = 1
    max_features: int | None = None
    weight: float = 1.0

    @property
    def key(self) -> tuple[int, str, tuple[int, int]]:
        """Specs with the same key cut a text into the same terms (they share a cache)."""
        return (self.column, self.analyzer, self.ngram)


# Measured on hf-datasets (bench/section_labels.py, docs/benchmarks.md): the title's two blocks
# at 0.6 each beside the body (`bench/type_balanced.py`: 0.3-1 tried; at 1 the title weighed
# twice the body; at 0.5 and 0.7 the type's source turned from the model under a fold shuffle);
# the title's cues of a question or a docs report
# (`learn/cues.py`) at 0.35 (`bench/type_cues.py`: 0.25-0.7 tried); the headings of the body's
# template or form (`learn/form_terms.py`) at 0.2 (`bench/form_terms.py`: 0.15-0.5 tried); its
# HTML comments, a block of their own at 0.2 (`bench/type_balanced.py`: 0.1-0.35 tried; within
# the headings' block they changed its norm and lost).
SPECS: tuple[PartSpec, ...] = (
    PartSpec("title_words", 0, "word", (1, 2), weight=0.6),
    PartSpec("title_chars", 0, "char_wb", (3, 5), min_df=2, weight=0.6),
    PartSpec("body_words", 1, "word", (1, 2), min_df=2, max_features=50_000),
    PartSpec("title_cues", 0, "cues", (1, 1), weight=0.35),
    PartSpec("form_terms", 2, "form", (1, 1), weight=0.2),
    PartSpec("template_comments", 2, "comments", (1, 1), weight=0.2),
)


def _cutter(spec: PartSpec) -> TextPart:
    """A `TextPart` without vocabulary: only its `terms` are used, to cut texts."""
    return TextPart(
        column=spec.column,
        analyzer=spec.analyzer,
        ngram=spec.ngram,
        token_pattern=TOKEN,
        lowercase=True,
        sublinear=True,
        weight=spec.weight,
        vocabulary={},
        idf=np.empty(0),
    )


class TermCache:
    """Every text's term counts under one way of cutting, by term id; each text cut once."""

    def __init__(self, spec: PartSpec) -> None:
        self._cut = _cutter(spec)
        self.ids: dict[str, int] = {}
        self.terms: list[str] = []
        self._docs: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def _id(self, term: str) -> int:
        i = self.ids.get(term)
        if i is None:
            i = self.ids[term] = len(self.terms)
            self.terms.append(term)
        return i

    def counts(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """(term ids, counts) of `text`, each id once."""
        got = self._docs.get(text)
        if got is None:
            c = Counter(self._cut.terms(text))
            ids = np.fromiter((self._id(t) for t in c), dtype=np.int64, count=len(c))
            n = np.fromiter(c.values(), dtype=np.float64, count=len(c))
            got = self._docs[text] = (ids, n)
        return got

    def stacked(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(row lengths, ids, counts) of `texts`, concatenated."""
        pairs = [self.counts(t) for t in texts]
        lengths = np.fromiter((len(p[0]) for p in pairs), dtype=np.int64, count=len(pairs))
        if not pairs:
            return lengths, np.empty(0, dtype=np.int64), np.empty(0)
        return lengths, np.concatenate([p[0] for p in pairs]), np.concatenate([p[1] for p in pairs])


@dataclass
class Caches:
    """The term caches of a set of specs (one per way of cutting), shared across fits."""

    by_key: dict[tuple, TermCache] = field(default_factory=dict)

    def of(self, spec: PartSpec) -> TermCache:
        cache = self.by_key.get(spec.key)
        if cache is None:
            cache = self.by_key[spec.key] = TermCache(spec)
        return cache


@dataclass
class FittedPart:
    spec: PartSpec
    cache: TermCache
    kept: np.ndarray  # term id of each column (columns in term order)
    idf: np.ndarray
    column_of: np.ndarray  # term id -> column, -1 when not kept (as long as the cache then)

    def matrix(self, texts: Sequence[str]) -> Csr:
        lengths, ids, counts = self.cache.stacked(texts)
        cols = np.full(len(ids), -1, dtype=np.int64)
        known = ids < len(self.column_of)
        cols[known] = self.column_of[ids[known]]
        keep = cols >= 0
        rows = np.repeat(np.arange(len(texts)), lengths)[keep]
        cols, tf = cols[keep], counts[keep]
        values = (np.log(tf) + 1.0) * self.idf[cols]
        norms = np.sqrt(np.bincount(rows, weights=values**2, minlength=len(texts)))
        values = values / norms[rows] * self.spec.weight
        indptr = np.zeros(len(texts) + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=len(texts)), out=indptr[1:])
        # float32: what the fit's products run in (twice as fast); prediction is float64
        return Csr(indptr, cols.astype(np.int32), values.astype(np.float32), len(self.kept))

    def text_part(self) -> TextPart:
        part = _cutter(self.spec)
        part.vocabulary = {self.cache.terms[t]: i for i, t in enumerate(self.kept.tolist())}
        part.idf = self.idf
        return part


def fit_part(spec: PartSpec, cache: TermCache, texts: Sequence[str]) -> FittedPart:
    """The block's vocabulary and idf on `texts` (scikit-learn's rules, ties by term)."""
    _, ids, counts = cache.stacked(texts)
    size = len(cache.terms)
    df = np.bincount(ids, minlength=size)
    candidates = np.flatnonzero(df >= spec.min_df)
    if spec.max_features is not None and len(candidates) > spec.max_features:
        tf = np.bincount(ids, weights=counts, minlength=size)
        terms = cache.terms
        by_term = sorted(candidates.tolist(), key=terms.__getitem__)
        order = np.argsort(-tf[by_term], kind="stable")[: spec.max_features]
        candidates = np.asarray(by_term)[order]
    kept = np.asarray(sorted(candidates.tolist(), key=cache.terms.__getitem__), dtype=np.int64)
    if not len(kept):
        raise ValueError(f"{spec.name}: empty vocabulary")
    column_of = np.full(size, -1, dtype=np.int64)
    column_of[kept] = np.arange(len(kept))
    n = len(texts)
    idf = np.log((1.0 + n) / (1.0 + df[kept])) + 1.0
    return FittedPart(spec, cache, kept, idf, column_of)


@dataclass
class Features:
    """The fitted blocks side by side: the training matrix maker, and the predictor's featurizer."""

    parts: list[FittedPart]

    @property
    def width(self) -> int:
        return sum(len(p.kept) for p in self.parts)

    def matrix(self, docs: Sequence[Doc]) -> Csr:
        return hstack([p.matrix([d[p.spec.column] for d in docs]) for p in self.parts])

    def featurizer(self) -> Featurizer:
        return Featurizer([p.text_part() for p in self.parts], fitted=self)

    def carry(self, old: Features, coef: np.ndarray) -> np.ndarray:
        """`coef` (rows: `old`'s columns, then any further block's) moved to these columns by
        block and term; new terms (and a block `old` had not) get 0, the rows after `old`'s
        columns (the embedding block) are kept."""
        out = np.zeros((self.width + coef.shape[0] - old.width, coef.shape[1]))
        old_at, at = {}, 0
        for old_p in old.parts:
            old_at[old_p.spec.name] = (old_p, at)
            at += len(old_p.kept)
        at_new = 0
        for new_p in self.parts:
            old_p, at_old = old_at.get(new_p.spec.name, (None, 0))
            if old_p is not None and new_p.cache is old_p.cache:
                where = np.full(len(new_p.cache.terms), -1, dtype=np.int64)
                where[old_p.kept] = np.arange(len(old_p.kept))
                src = where[new_p.kept]
                hit = src >= 0
                out[at_new + np.flatnonzero(hit)] = coef[at_old + src[hit]]
            at_new += len(new_p.kept)
        out[self.width :] = coef[old.width :]
        return out


def fit_features(
    docs: Sequence[Doc],
    specs: Sequence[PartSpec] = SPECS,
    caches: Caches | None = None,
) -> Features:
    """Fit every block on `docs`; ValueError if a block of words has no terms (a block of cues or
    form terms without any kept is left out: `learn/cues.py`, `learn/form_terms.py`)."""
    caches = caches if caches is not None else Caches()
    parts = []
    for s in specs:
        texts = [d[s.column] for d in docs]
        try:
            parts.append(fit_part(s, caches.of(s), texts))
        except ValueError:
            if s.analyzer not in OPTIONAL:
                raise
    return Features(parts)
