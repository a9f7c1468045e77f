"""Prediction: the fitted TF-IDF features and linear heads as numpy arrays, applied to one issue.

`learn/features.py` and `learn/logistic.py` fit them (numpy alone); what is kept is what prediction
needs (vocabularies, idf weights, coefficients). The arithmetic is scikit-learn's (`TfidfVectorizer`
analyzers, sublinear tf, l2 norm, block weights; `predict_proba` of `LogisticRegression`), and
`tests/test_linear.py` and `tests/test_logistic.py` check it against scikit-learn's own.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from issue_assistant.learn.cues import title_cues
from issue_assistant.learn.form_terms import COMMENT
from issue_assistant.learn.text import Doc


@dataclass
class TextPart:
    """One fitted `TfidfVectorizer` of the featurizer, reading one column of a `Doc` (title,
    prose, form terms)."""

    column: int
    # "word", "char_wb", "cues" (`learn/cues.py`), "form" or "comments" (`learn/form_terms.py`:
    # the headings' terms, or the comments')
    analyzer: str
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
        if self.analyzer == "cues":
            return title_cues(text)
        if self.analyzer == "form":  # the terms themselves, one by space
            return [t for t in text.split() if not t.startswith(COMMENT)]
        if self.analyzer == "comments":
            return [t for t in text.split() if t.startswith(COMMENT)]
        lo, hi = self.ngram
        if self.analyzer == "word":
            tokens = self._token.findall(text)
            out = list(tokens) if lo == 1 else []
            for n in range(max(lo, 2), min(hi, len(tokens)) + 1):
                out.extend(" ".join(tokens[i : i + n]) for i in range(len(tokens) - n + 1))
            return out
        out = []
        for word in text.split():
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
    """The featurizer's parts side by side (each part's columns after the previous parts').

    `fitted` is the fit's own `learn.features.Features` while in memory (never saved): it makes
    the same rows for many issues at once, faster (the calibration folds score with it).
    """

    parts: list[TextPart]
    fitted: Any = field(default=None, repr=False, compare=False)

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

    def rows(self, docs: Sequence[Doc]) -> list[tuple[np.ndarray, np.ndarray]]:
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
    """A group's fitted linear classifier: one column of coefficients per output.

    `kind` is "binary" (two classes, one output, the second class positive), "softmax" (one
    output per class, a softmax over them) or "ovr" (one independent sigmoid per label).
    """

    kind: str
    coef: np.ndarray  # (width, outputs), float32
    intercept: np.ndarray  # (outputs,) float64

    def outputs(self) -> int:
        return int(self.coef.shape[1])

    def classes(self) -> int:
        """How many probabilities a row gets."""
        return self.outputs() + (self.kind == "binary")

    def from_scores(self, z: np.ndarray) -> np.ndarray:
        """Probabilities from the (rows, outputs) linear scores."""
        if self.kind == "softmax":
            z = z - z.max(axis=1, keepdims=True)
            e = np.exp(z)
            return e / e.sum(axis=1, keepdims=True)
        p = np.exp(-np.logaddexp(0.0, -z))
        return np.hstack([1.0 - p, p]) if self.kind == "binary" else p

    def scores(self, rows: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
        """(rows, outputs) linear scores of sparse rows ((columns, values), `Featurizer.rows`)."""
        z = np.empty((len(rows), self.outputs()))
        for i, (cols, vals) in enumerate(rows):
            z[i] = vals @ self.coef[cols].astype(np.float64) + self.intercept
        return z

    def probabilities(self, rows: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
        return self.from_scores(self.scores(rows))
