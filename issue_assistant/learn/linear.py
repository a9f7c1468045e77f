"""Prediction without scikit-learn: the fitted TF-IDF features and linear heads as numpy arrays.

scikit-learn fits the model (`learn/model.py`); `compile_featurizer` and `compile_head` copy what
prediction needs out of the fitted objects (vocabularies, idf weights, coefficients), and the
classes here apply them with numpy alone. Importing scikit-learn costs about 1.5 s here, more than
the rest of an `analyze` together, so a warm run never imports it. The arithmetic is scikit-learn's
(`TfidfVectorizer` analyzers, sublinear tf, l2 norm, `ColumnTransformer` weights; `predict_proba`
of a log-loss `SGDClassifier` and of `OneVsRestClassifier`); `tests/test_linear.py` checks the
probabilities against scikit-learn's own.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

_WHITE_SPACES = re.compile(r"\s\s+")


@dataclass
class TextPart:
    """One fitted `TfidfVectorizer` of the featurizer, reading one column of (title, prose)."""

    column: int
    analyzer: str  # "word" or "char_wb"
    ngram: tuple[int, int]
    token_pattern: str
    lowercase: bool
    sublinear: bool
    weight: float
    vocabulary: dict[str, int]
    idf: np.ndarray

    def __post_init__(self) -> None:
        self._token = re.compile(self.token_pattern)

    def terms(self, text: str) -> list[str]:
        if self.lowercase:
            text = text.lower()
        lo, hi = self.ngram
        if self.analyzer == "word":
            tokens = self._token.findall(text)
            out = list(tokens) if lo == 1 else []
            for n in range(max(lo, 2), min(hi, len(tokens)) + 1):
                out.extend(" ".join(tokens[i : i + n]) for i in range(len(tokens) - n + 1))
            return out
        out = []
        for word in _WHITE_SPACES.sub(" ", text).split():
            w = f" {word} "
            for n in range(lo, hi + 1):
                offset = 0
                out.append(w[:n])
                while offset + n < len(w):
                    offset += 1
                    out.append(w[offset : offset + n])
                if offset == 0:  # a word shorter than n is counted once
                    break
        return out

    def vector(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """(columns, values) of the l2-normalised, weighted TF-IDF row of `text`."""
        counts = Counter(self.vocabulary[t] for t in self.terms(text) if t in self.vocabulary)
        if not counts:
            return np.empty(0, dtype=np.int64), np.empty(0)
        cols = np.fromiter(counts.keys(), dtype=np.int64, count=len(counts))
        tf = np.fromiter(counts.values(), dtype=np.float64, count=len(counts))
        if self.sublinear:
            tf = np.log(tf) + 1.0
        values = tf * self.idf[cols]
        norm = math.sqrt(float(values @ values))
        if norm > 0:
            values /= norm
        return cols, values * self.weight


@dataclass
class Featurizer:
    """The featurizer's parts side by side (each part's columns after the previous parts')."""

    parts: list[TextPart]

    @property
    def offsets(self) -> list[int]:
        out, at = [], 0
        for p in self.parts:
            out.append(at)
            at += len(p.idf)
        return out

    @property
    def width(self) -> int:
        return sum(len(p.idf) for p in self.parts)

    def rows(self, docs: Sequence[tuple[str, str]]) -> list[tuple[np.ndarray, np.ndarray]]:
        out = []
        offsets = self.offsets
        for doc in docs:
            cols, vals = [], []
            for part, off in zip(self.parts, offsets, strict=True):
                c, v = part.vector(doc[part.column])
                cols.append(c + off)
                vals.append(v)
            out.append((np.concatenate(cols), np.concatenate(vals)))
        return out


@dataclass
class LinearHead:
    """A group's fitted linear classifier: one row of coefficients per output.

    `kind` is "binary" (two classes, one row, the second class positive), "multiclass" (one row
    per class, sigmoids normalised to sum to 1) or "ovr" (one independent sigmoid per label).
    """

    kind: str
    coef: np.ndarray  # (outputs, width), float32
    intercept: np.ndarray  # (outputs,)

    def probabilities(self, rows: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
        out = np.empty((len(rows), self.coef.shape[0] + (self.kind == "binary")))
        for i, (cols, vals) in enumerate(rows):
            z = self.coef[:, cols].astype(np.float64) @ vals + self.intercept
            with np.errstate(over="ignore"):
                p = 1.0 / (1.0 + np.exp(-z))
            if self.kind == "binary":
                out[i] = (1.0 - p[0], p[0])
            elif self.kind == "multiclass":
                out[i] = p / p.sum()
            else:
                out[i] = p
        return out


def compile_featurizer(column_transformer: Any) -> Featurizer:
    """The fitted `ColumnTransformer` of `learn.features.featurizer()` as a `Featurizer`."""
    weights = column_transformer.transformer_weights or {}
    parts = []
    for name, vec, column in column_transformer.transformers_:
        if vec == "drop" or name == "remainder":
            continue
        if vec.norm != "l2" or not vec.use_idf or vec.strip_accents or vec.stop_words:
            raise ValueError(f"{name}: only l2-normalised TF-IDF without accents or stop words")
        vocab = {str(t): int(i) for t, i in vec.vocabulary_.items()}
        parts.append(
            TextPart(
                column=int(column),
                analyzer=vec.analyzer,
                ngram=tuple(vec.ngram_range),
                token_pattern=vec.token_pattern,
                lowercase=bool(vec.lowercase),
                sublinear=bool(vec.sublinear_tf),
                weight=float(weights.get(name, 1.0)),
                vocabulary=vocab,
                idf=np.asarray(vec.idf_, dtype=np.float64),
            )
        )
    return Featurizer(parts)


def _rows(estimator: Any) -> tuple[np.ndarray, np.ndarray]:
    """(coef, intercept) of one binary estimator of a one-vs-rest: constant ones included."""
    if hasattr(estimator, "coef_"):
        return np.asarray(estimator.coef_[0]), np.asarray(estimator.intercept_[:1])
    # scikit-learn's _ConstantPredictor: a label always (1) or never (0) present when fit
    constant = float(np.ravel(estimator.y_)[0])
    return np.zeros(0), np.array([math.inf if constant > 0.5 else -math.inf])


def compile_head(estimator: Any, width: int) -> LinearHead:
    """A fitted log-loss `SGDClassifier` or a `OneVsRestClassifier` of them as a `LinearHead`."""
    if hasattr(estimator, "estimators_"):
        coefs, intercepts = [], []
        for est in estimator.estimators_:
            c, b = _rows(est)
            coefs.append(c if c.size else np.zeros(width))
            intercepts.append(b[0])
        return LinearHead("ovr", np.vstack(coefs).astype(np.float32), np.array(intercepts))
    coef = np.asarray(estimator.coef_, dtype=np.float32)
    kind = "binary" if coef.shape[0] == 1 else "multiclass"
    return LinearHead(kind, coef, np.asarray(estimator.intercept_, dtype=np.float64))
