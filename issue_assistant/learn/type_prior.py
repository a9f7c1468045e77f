"""A general model of an issue's kind (bug, feature, question, docs), fit on other repositories.

Shipped as `type_prior.npz` beside this module, fit once on the typed issues of the shared data
(`../shared/data`) by `bench/fit_type_prior.py`. Its features are portable: the title's and the
prose's word 1-2 grams and the title's char 3-5 grams, hashed into `BUCKETS` columns (no
repository's vocabulary), sublinear tf times the idf of the data it was fit on, l2 per block;
and the title's and the prose's word vectors (`index/word_vectors.py`), which carry what it
learned to words it never saw ("segfault" beside "crash"), times `WORDS_SCALE`.

A repository's type labels are mapped onto the kinds by name (`kind_of`: `bug`, `kind/bug`,
`type: bug`, `enhancement`, `feature request`, `question`, `support`, `docs` ...); a qualified
name (`dataset bug`) is a kind of its own, so it gets none. `learn/model.py` blends the prior
into the type model's probabilities (`blend`: each mapped type's probability times its kind's
evidence, the prior's probability over its `base`, to the power of a weight that shrinks as the
repository's own labelled history grows, `weight`). A kind the prior cannot tell out of fold
(the shared data's 16 questions) is left out of it (`MIN_TOLD`), so a repository's type of that
kind is left as its own model says.
"""

from __future__ import annotations

import json
import math
import re
import threading
import zlib
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import numpy as np

from issue_assistant.index.word_vectors import DIM as WORDS_DIM
from issue_assistant.index.word_vectors import MODEL_ID as WORDS_ID
from issue_assistant.index.word_vectors import load_word_vectors
from issue_assistant.learn.linear import TextPart
from issue_assistant.learn.sparse import Csr, Dense, Joint
from issue_assistant.learn.text import Doc

PRIOR_FILE = Path(__file__).with_name("type_prior.npz")
KINDS = ("bug", "feature", "question", "docs")
BUCKETS = 1 << 18
TOKEN = r"(?u)\b\w\w+\b"
# (block, column of (title, prose), analyzer, n-grams)
BLOCKS = (("tw", 0, "word", (1, 2)), ("tc", 0, "char_wb", (3, 5)), ("bw", 1, "word", (1, 2)))
# The prior's weight with no labelled history, and the history at which it is halved.
WEIGHT = 2.0
HALF_AT = 150
# The word vectors' weight beside the hashed blocks (each block has unit length).
WORDS_SCALE = 2.0

_NAMES: dict[str, tuple[str, ...]] = {
    "bug": (
        "bug",
        "bugs",
        "defect",
        "bug report",
        "type bug",
        "kind bug",
        "t bug",
        "crash",
        "regression",
    ),
    "feature": (
        "feature",
        "features",
        "enhancement",
        "enhancements",
        "feature request",
        "new feature",
        "improvement",
        "request",
    ),
    "question": ("question", "questions", "support", "usage", "help", "help request", "how to"),
    "docs": ("docs", "doc", "documentation", "docs bug", "doc bug", "documentation bug"),
}
_BY_NAME = {n: k for k, names in _NAMES.items() for n in names}
_PREFIX = re.compile(r"^(kind|type|t|c|category|issue type|issue)\s*[/:-]\s*")
# What a name may carry beside its kind: an emoji's short code (`:sparkles:`), a note in
# brackets (`question (invalid tracker)`).
_ASIDE = re.compile(r":[a-z0-9_+-]+:|\([^()]*\)|\[[^\[\]]*\]$")
# Alternatives one name joins (`Questions and Help`, `question/support`).
_JOINED = re.compile(r"\s*(?:/|&|\+|,|\||\band\b|\bor\b)\s*")
_NOT_WORD = re.compile(r"[^a-z]+")


def kind_of(name: str) -> str | None:
    """The kind a type label's name says (`kind/bug` -> bug, `enhancement` -> feature,
    `Questions and Help` -> question), or None (a qualified name such as `dataset bug` is a
    type of its own, and so is one joining two kinds, `bug/feature`)."""
    text = _PREFIX.sub("", name.casefold().strip())
    kind = _BY_NAME.get(_NOT_WORD.sub(" ", text).strip())
    if kind is not None:
        return kind
    text = _PREFIX.sub("", _ASIDE.sub(" ", text).strip())
    parts = [_NOT_WORD.sub(" ", p).strip() for p in _JOINED.split(text)]
    kinds = {_BY_NAME.get(p) for p in parts if p}
    return kinds.pop() if len(kinds) == 1 else None


def _parts() -> list[tuple[int, int, TextPart]]:
    return [
        (
            i,
            column,
            TextPart(column, analyzer, ngram, TOKEN, True, True, 1.0, {}, np.empty(0)),
        )
        for i, (_, column, analyzer, ngram) in enumerate(BLOCKS)
    ]


def _bucket(block: int, term: str) -> int:
    return zlib.crc32(f"{block}\x1f{term}".encode()) % BUCKETS


def hashed_counts(docs: Sequence[Doc]) -> list[list[tuple[np.ndarray, np.ndarray]]]:
    """Per doc, per block, (bucket ids, term counts): each bucket once."""
    parts = _parts()
    out = []
    for doc in docs:
        row = []
        for block, column, part in parts:
            c = Counter(_bucket(block, t) for t in part.terms(doc[column]))
            ids = np.fromiter(c.keys(), dtype=np.int64, count=len(c))
            n = np.fromiter(c.values(), dtype=np.float64, count=len(c))
            row.append((ids, n))
        out.append(row)
    return out


def matrix(
    counts: Sequence[Sequence[tuple[np.ndarray, np.ndarray]]],
    buckets: np.ndarray,
    idf: np.ndarray,
) -> Csr:
    """Rows over the kept `buckets` (sorted): sublinear tf times idf, l2 per block."""
    indptr, cols, vals = [0], [], []
    for row in counts:
        at = 0
        for ids, n in row:
            pos = np.searchsorted(buckets, ids)
            pos = np.minimum(pos, len(buckets) - 1)
            hit = buckets[pos] == ids
            col = pos[hit]
            v = (np.log(n[hit]) + 1.0) * idf[col]
            norm = math.sqrt(float(v @ v))
            if norm > 0:
                v = v / norm
            cols.append(col)
            vals.append(v)
            at += len(col)
        indptr.append(indptr[-1] + at)
    return Csr(
        np.asarray(indptr, dtype=np.int64),
        np.concatenate(cols).astype(np.int32) if cols else np.empty(0, np.int32),
        np.concatenate(vals).astype(np.float32) if vals else np.empty(0, np.float32),
        len(buckets),
    )


def word_block(docs: Sequence[Doc]) -> Dense:
    """The title's and the prose's word vectors side by side, times `WORDS_SCALE`."""
    words = load_word_vectors()
    title = words.embed([d[0] for d in docs])
    prose = words.embed([d[1] for d in docs])
    return Dense(np.hstack([title, prose]).astype(np.float64) * WORDS_SCALE)


def features(docs: Sequence[Doc], buckets: np.ndarray, idf: np.ndarray) -> Joint:
    """The prior's rows: the hashed blocks over `buckets`, then the word vectors."""
    return Joint(matrix(hashed_counts(docs), buckets, idf), word_block(docs))


# The most texts whose evidence a loaded prior keeps.
EVIDENCE_KEPT = 50_000


@dataclass
class TypePrior:
    """The fitted prior: the kept buckets, their idf, the coefficients per kind."""

    kinds: list[str]
    buckets: np.ndarray
    idf: np.ndarray
    coef: np.ndarray  # (buckets + the word vectors' columns, kinds)
    intercept: np.ndarray
    about: dict
    base: np.ndarray  # each kind's mean out-of-fold probability on the data it was fit on
    # the evidence of the texts read so far (`known_evidence`), at most EVIDENCE_KEPT of them
    _kept: dict[Doc, dict[str, float]] = field(default_factory=dict, repr=False, compare=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @property
    def key(self) -> str:
        """Which prior this is (when and at which commit it was fit, on which word vectors)."""
        about = self.about
        fit = f"{about.get('date', '')}:{about.get('commit', '')}"
        return f"{fit}:{len(self.buckets)}:{about.get('words', '')}"

    def kind_probabilities(self, docs: Sequence[Doc]) -> np.ndarray:
        """Each doc's probability of each of `kinds` (rows sum to 1)."""
        x = features(docs, self.buckets, self.idf)
        return _softmax(x.dot(self.coef.astype(np.float64)) + self.intercept)

    def evidence(self, docs: Sequence[Doc]) -> list[dict[str, float]]:
        """Per doc, each kind's probability over its `base`: above 1 where the prior says the
        kind more than it does of an issue on average."""
        ratios = self.kind_probabilities(docs) / np.maximum(self.base, 1e-6)
        return [dict(zip(self.kinds, r, strict=True)) for r in ratios.tolist()]

    def known_evidence(self, docs: Sequence[Doc]) -> list[dict[str, float]]:
        """`evidence(docs)`, each doc read once per loaded prior (the folds and evaluate's
        buckets score the same issues again)."""
        with self._lock:
            known = {d: self._kept.get(d) for d in docs}
        missing = [d for d, e in known.items() if e is None]
        if missing:
            fresh = dict(zip(missing, self.evidence(missing), strict=True))
            known.update(fresh)
            with self._lock:
                if len(self._kept) + len(fresh) > EVIDENCE_KEPT:
                    self._kept.clear()
                self._kept.update(fresh)
        return [known[d] for d in docs]

    def save(self, path: Path) -> None:
        with path.open("wb") as f:
            np.savez_compressed(
                f,
                kinds=np.asarray(self.kinds),
                buckets=self.buckets.astype(np.int32),
                idf=self.idf.astype(np.float32),
                coef=self.coef.astype(np.float16),
                intercept=self.intercept.astype(np.float64),
                base=self.base.astype(np.float64),
                about=np.asarray(json.dumps(self.about, sort_keys=True)),
            )


def read_prior(path: Path) -> TypePrior:
    with np.load(path, allow_pickle=False) as z:
        prior = TypePrior(
            kinds=[str(k) for k in z["kinds"]],
            buckets=z["buckets"].astype(np.int64),
            idf=z["idf"].astype(np.float64),
            coef=z["coef"].astype(np.float32),
            intercept=z["intercept"].astype(np.float64),
            about=json.loads(str(z["about"])),
            base=z["base"].astype(np.float64),
        )
    words = prior.about.get("words")
    width = len(prior.buckets) + 2 * WORDS_DIM
    if words != WORDS_ID or prior.coef.shape[0] != width:
        raise ValueError(
            f"{path}: fit on other word vectors ({words}, {prior.coef.shape[0]} columns) than "
            f"the shipped ones ({WORDS_ID}, {width}); fit it again (bench/fit_type_prior.py)"
        )
    return prior


MIN_KIND = 5  # a kind with fewer typed issues in the data is left out of the prior
MIN_TOLD = 0.5  # ... and one it tells out of fold with a lower F1
C = 1.0
BASE_FOLDS = 5


def _fit_logistic(x: Csr, y: np.ndarray, classes: int, c: float):  # noqa: ANN202
    from issue_assistant.learn import logistic

    weights = logistic.balanced_weights(y, classes)
    return logistic.fit(x, y, c=c, kind="softmax", classes=classes, sample_weight=weights)


def _softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


@dataclass
class _Fit:
    buckets: np.ndarray
    idf: np.ndarray
    coef: np.ndarray
    intercept: np.ndarray
    base: np.ndarray
    told: dict[str, float]  # each kind's out-of-fold F1 (its evidence the highest)


def _fit_kinds(docs: Sequence[Doc], kinds: Sequence[str], names: list[str], c: float) -> _Fit:
    from issue_assistant.learn.heads import f1_by_class

    keep = [i for i, k in enumerate(kinds) if k in names]
    kept = [docs[i] for i in keep]
    counts = hashed_counts(kept)
    df = Counter(int(b) for row in counts for ids, _ in row for b in ids)
    buckets = np.asarray(sorted(b for b, n in df.items() if n >= 2), dtype=np.int64)
    n = len(keep)
    idf = np.log((1.0 + n) / (1.0 + np.asarray([df[int(b)] for b in buckets]))) + 1.0
    x = Joint(matrix(counts, buckets, idf), word_block(kept))
    y = np.asarray([names.index(kinds[i]) for i in keep], dtype=np.int64)
    fold = np.arange(n) % BASE_FOLDS
    np.random.default_rng(0).shuffle(fold)
    held = np.zeros((n, len(names)))
    for f in range(BASE_FOLDS):
        train, test = np.flatnonzero(fold != f), np.flatnonzero(fold == f)
        got = _fit_logistic(x.take(train), y[train], len(names), c)
        held[test] = _softmax(x.take(test).dot(got.coef) + got.intercept)
    got = _fit_logistic(x, y, len(names), c)
    base = np.mean([held[y == k].mean(axis=0) for k in range(len(names))], axis=0)
    said = (held / np.maximum(base, 1e-6)).argmax(axis=1)
    f1 = f1_by_class(said, y, np.arange(len(names)))
    told = {name: round(float(v), 4) for name, v in zip(names, f1, strict=True)}
    return _Fit(buckets, idf, got.coef, got.intercept, base, told)


def fit_prior(
    docs: Sequence[Doc], kinds: Sequence[str], about: dict, c: float | None = None
) -> TypePrior:
    """The prior on `docs` of the given `kinds`: a multinomial logistic
    regression, each kind weighted as much as the others, over the buckets seen in two docs;
    with each kind's mean out-of-fold probability on those docs (`base`: what the prior says
    of an issue it did not see, on average). A kind it cannot tell out of fold (F1 under
    `MIN_TOLD` where its evidence is the highest) is left out and the rest fit again, so a
    repository's type of that kind is left as its own model says."""
    c = C if c is None else c
    counted = Counter(kinds)
    names = [k for k in KINDS if counted[k] >= MIN_KIND]
    if len(names) < 2:
        raise ValueError(f"fewer than 2 kinds with {MIN_KIND}+ issues: {dict(counted)}")
    got = _fit_kinds(docs, kinds, names, c)
    left_out = {k: f1 for k, f1 in got.told.items() if f1 < MIN_TOLD}
    if left_out and len(names) - len(left_out) >= 2:
        names = [k for k in names if k not in left_out]
        got = _fit_kinds(docs, kinds, names, c)
    else:
        left_out = {}
    about = {
        **about,
        "issues": {k: counted[k] for k in names},
        "told": got.told,
        "left out": left_out,
        "c": c,
        "words": WORDS_ID,
    }
    return TypePrior(names, got.buckets, got.idf, got.coef, got.intercept, about, got.base)


@cache
def load_prior(path: Path = PRIOR_FILE) -> TypePrior:
    """The shipped prior (package data)."""
    return read_prior(path)


def weight(issues: int) -> float:
    """The prior's weight beside a model fit on `issues` labelled issues: `WEIGHT` with none,
    half of it at `HALF_AT`, shrinking towards 0 as the history grows."""
    return WEIGHT * HALF_AT / (HALF_AT + max(issues, 0))


@dataclass(frozen=True)
class KindMap:
    """A repository's type labels that map onto kinds the prior knows, and their kinds."""

    kinds: dict[str, str]  # label -> kind

    @property
    def usable(self) -> bool:
        return len(set(self.kinds.values())) >= 2


def kind_map(
    labels: Sequence[str], prior: TypePrior, explicit: Mapping[str, str] | None = None
) -> KindMap:
    """Which of `labels` map onto which of the prior's kinds (`explicit` first, then by name)."""
    out = {}
    for name in labels:
        kind = (explicit or {}).get(name) or kind_of(name)
        if kind is not None and kind in prior.kinds:
            out[name] = kind
    return KindMap(out)


def blend(
    probs: Mapping[str, float], kinds: Mapping[str, str], evidence: Mapping[str, float], w: float
) -> dict[str, float]:
    """The model's probabilities times each label's prior ratio to the power `w`, renormalised.

    A mapped label's ratio is its kind's `evidence` (`TypePrior.evidence`) over the mean
    evidence of the kinds the repository has; an unmapped label's is 1 (the prior is silent)."""
    if not probs or w <= 0:
        return dict(probs)
    present = sorted({kinds[n] for n in probs if n in kinds})
    if len(present) < 2:
        return dict(probs)
    mean = sum(evidence.get(k, 0.0) for k in present) / len(present)
    if mean <= 0:
        return dict(probs)
    scores = {}
    for name, p in probs.items():
        ratio = evidence.get(kinds[name], 0.0) / mean if name in kinds else 1.0
        scores[name] = max(p, 1e-12) * max(ratio, 1e-6) ** w
    norm = sum(scores.values())
    return {n: s / norm for n, s in scores.items()}
