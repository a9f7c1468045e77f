"""One label group's heads: a logistic regression on the TF-IDF features, and one on embeddings.

Single-label groups (type, priority) get a multinomial model (binary with two labels), weighted so
each label counts as much as the others (scikit-learn's class_weight="balanced"); multi-label
groups (area, topic) one binary model per label. C, the inverse regularisation strength, is
chosen per head by stratified k-fold cross-validation on the training issues alone (the most
recent `CV_ROWS` of them on a large history), by the mean log loss of the held-out issues. On a
short history the TF-IDF fits run in the span of the training rows (`learn/rowspace.py`): the
same fits, cheaper.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, replace

import numpy as np

from issue_assistant.learn import logistic
from issue_assistant.learn.features import Features
from issue_assistant.learn.fitting import Fitting
from issue_assistant.learn.linear import LinearHead
from issue_assistant.learn.logistic import Matrix
from issue_assistant.learn.rowspace import Factor, RowSpace
from issue_assistant.learn.sparse import Csr, Dense, Joint

C_GRID = (3.0, 10.0, 30.0, 100.0)
CV_FOLDS = 3
CV_ROWS = 1000
CV_GTOL = 1e-3  # the choice of C needs the held-out loss, not the last digits of the optimum
BALANCED = True


@dataclass
class FittedGroup:
    head: LinearHead  # the TF-IDF block's coefficients and the intercepts
    dense: LinearHead | None  # the embedding block's coefficients (one model on both blocks)
    c: float
    dense_mean: np.ndarray | None = None


def _kind(single: bool, classes: int) -> str:
    if not single:
        return "ovr"
    return "binary" if classes == 2 else "softmax"


def _folds(y: np.ndarray, single: bool, k: int, seed: int = 0) -> np.ndarray:
    """A fold number per row: stratified by label for single-label targets."""
    rnd = random.Random(seed)
    fold = np.empty(len(y), dtype=np.int64)
    if single:
        for label in np.unique(y):
            members = np.flatnonzero(y == label).tolist()
            rnd.shuffle(members)
            start = rnd.randrange(k)
            fold[members] = (np.arange(len(members)) + start) % k
    else:
        order = list(range(len(y)))
        rnd.shuffle(order)
        fold[order] = np.arange(len(y)) % k
    return fold


SCORE = "log_loss"


def f1_by_class(pred: np.ndarray, y: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """Per class of `classes` (class indices, as `pred` and `y` hold them), the F1 of the
    predictions `pred` against the gold `y`; 0 for a class never predicted right."""
    out = np.zeros(len(classes))
    for i, c in enumerate(classes):
        tp = np.sum((pred == c) & (y == c))
        if tp:
            out[i] = 2 * tp / (np.sum(pred == c) + np.sum(y == c))
    return out


def _macro_f1_loss(proba: np.ndarray, y: np.ndarray) -> float:
    """1 - macro F1 of the top label (for single-label groups)."""
    return 1.0 - float(np.mean(f1_by_class(proba.argmax(axis=1), y, np.unique(y))))


def _loss(proba: np.ndarray, y: np.ndarray, kind: str) -> float:
    if SCORE == "f1" and kind != "ovr":
        return _macro_f1_loss(proba, y)
    if SCORE == "balanced" and kind != "ovr":
        # each label's issues weigh as much as another's, as in the fit
        picked = np.log(np.clip(proba[np.arange(len(y)), y], 1e-15, 1.0))
        return float(-np.mean([picked[y == c].mean() for c in np.unique(y)]))
    if kind == "ovr":
        p = np.clip(proba, 1e-15, 1 - 1e-15)
        return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))
    return logistic.log_loss(proba, y)


def _weights(y: np.ndarray, kind: str, classes: int) -> np.ndarray | None:
    if kind == "ovr" or not BALANCED:
        return None
    return logistic.balanced_weights(y, classes)


def _fit(
    x: Matrix,
    y: np.ndarray,
    kind: str,
    classes: int,
    c: float,
    warm: tuple[np.ndarray, np.ndarray] | None = None,
    gtol: float = logistic.GTOL,
) -> logistic.Fitted:
    """One head; in a multi-label group, labels never (or always) present get a constant. On a
    row span's `Factor`, the coefficients are the span's and the stopping test the terms'."""
    factor = x if isinstance(x, Factor) else None
    if kind != "ovr":
        weights = _weights(y, kind, classes)
        done = factor.settled() if factor is not None else None
        return logistic.fit(
            x,
            y,
            c=c,
            kind=kind,
            classes=classes,
            sample_weight=weights,
            warm=warm,
            gtol=gtol,
            done=done,
        )
    width = x.shape[1]
    positives = y.sum(axis=0)
    varied = np.flatnonzero((positives > 0) & (positives < len(y)))
    coef = np.zeros((width, y.shape[1]))
    intercept = np.where(positives > 0, math.inf, -math.inf)
    if len(varied):
        part_warm = (warm[0][:, varied], warm[1][varied]) if warm is not None else None
        done = factor.settled(varied) if factor is not None else None
        got = logistic.fit(x, y[:, varied], c=c, kind="ovr", warm=part_warm, gtol=gtol, done=done)
        coef[:, varied], intercept[varied] = got.coef, got.intercept
        return logistic.Fitted(coef, intercept, got.iterations, got.converged)
    return logistic.Fitted(coef, intercept, 0, True)


def choose_c(x: Matrix, y: np.ndarray, kind: str, classes: int, grid: tuple[float, ...]) -> float:
    """The C of `grid` with the lowest held-out log loss (k-fold on the most recent rows)."""
    n = x.shape[0]
    recent = np.arange(max(0, n - CV_ROWS), n)
    xs, ys = (x.take(recent), y[recent]) if len(recent) < n else (x, y)
    fold = _folds(ys if kind != "ovr" else ys[:, 0], kind != "ovr", CV_FOLDS)
    losses = np.zeros(len(grid))
    for f in range(CV_FOLDS):
        train, test = np.flatnonzero(fold != f), np.flatnonzero(fold == f)
        if not len(test) or not len(train):
            continue
        xt, xv = xs.take(train), xs.take(test)
        warm = None
        for i, c in enumerate(sorted(grid)):  # ascending: each fit starts from the previous
            got = _fit(xt, ys[train], kind, classes, c, warm, gtol=CV_GTOL)
            warm = (got.coef, got.intercept)
            losses[i] += _loss(logistic.probabilities(xv, got, kind), ys[test], kind) * len(test)
    return sorted(grid)[int(np.argmin(losses))]


def _targets(ys: list, classes: list[str], single: bool) -> np.ndarray:
    if single:
        where = {c: i for i, c in enumerate(classes)}
        return np.array([where[v] for v in ys], dtype=np.int64)
    return np.asarray(ys, dtype=np.float64)


def _head(
    key: tuple,
    x: Matrix,
    y: np.ndarray,
    kind: str,
    classes: int,
    grid: tuple[float, ...],
    fitting: Fitting,
    features: Features | None,
) -> tuple[LinearHead, float]:
    """`x`: the rows' features, or their row span's `Factor` (the coefficients come back on the
    terms)."""
    rows = x.shape[0]
    c = fitting.chosen_c(key, rows, tolerance=0.1)
    if c is None:
        c = choose_c(x, y, kind, classes, grid)
        fitting.remember_c(key, rows, c)
    warm = fitting.warm(key, rows, features)
    if isinstance(x, Factor) and warm is not None:
        x, start = x.space.warm_start(x, warm[0])
        warm = (start, warm[1])
    got = _fit(x, y, kind, classes, c, warm)
    if isinstance(x, Factor):
        got = replace(got, coef=x.on_terms(got.coef))
    fitting.remember(key, rows, features, got)
    head = LinearHead(kind, got.coef.astype(np.float32), got.intercept.astype(np.float64))
    return head, c


def fit_group(
    group: str,
    x: Csr,
    features: Features,
    dense: np.ndarray | None,
    idx: list[int],
    classes: list[str],
    ys: list,
    fitting: Fitting,
    *,
    single: bool,
    space: RowSpace | None = None,
) -> FittedGroup:
    """The group's model on rows `idx` of `x` (and of `dense`, the embeddings: one model on
    the TF-IDF and embedding blocks side by side); without embeddings, fit in `space`, the span
    of `x`'s rows, when given (the same fit, `learn/rowspace.py`)."""
    kind = _kind(single, len(classes))
    y = _targets(ys, classes, single)
    rows = np.asarray(idx, dtype=np.int64)
    key = (group, tuple(classes), "tfidf" if dense is None else "joint")
    if dense is None:
        matrix = space.rows(rows) if space is not None else x.take(rows)
        head, c = _head(key, matrix, y, kind, len(classes), C_GRID, fitting, features)
        return FittedGroup(head, None, c)
    vectors = dense[rows]
    joint = Joint(x.take(rows), Dense(vectors))
    both, c = _head(key, joint, y, kind, len(classes), C_GRID, fitting, features)
    width = features.width
    head = LinearHead(kind, both.coef[:width], both.intercept)
    block = LinearHead(kind, both.coef[width:], np.zeros_like(both.intercept))
    return FittedGroup(head, block, c, vectors.mean(axis=0))
