"""L2-regularised logistic regression in numpy alone (L-BFGS), the objective scikit-learn's.

`LogisticRegression(C=C, class_weight=...)` of scikit-learn minimises, for the weights W and the
unpenalised intercepts b,

    sum_i s_i * loss_i(W, b) / S  +  ||W||^2 / (2 C S)          (S = sum_i s_i)

with `loss_i` the multinomial log loss for three or more classes and the binary log loss for two
(one row of weights, the second class positive). `fit` minimises the same function, so the fitted
probabilities agree with scikit-learn's to the solvers' tolerance (`tests/test_logistic.py`
checks it on the shared data). `kind="ovr"` fits one independent binary model per column of a
0/1 target matrix (the multi-label groups). A `warm` start (coefficients of a previous fit, say on
a few fewer issues) reaches the same optimum in fewer steps.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

GTOL = 1e-4  # stop when the largest gradient entry is below this (scikit-learn's default tol)
MAX_ITER = 300


# Whether a gradient is small enough to stop: (gradient, tolerance) -> bool.
Done = Callable[[np.ndarray, float], bool]


def largest_at_most(gradient: np.ndarray, tol: float) -> bool:
    return float(np.max(np.abs(gradient), initial=0.0)) <= tol


def _dot(a: np.ndarray, b: np.ndarray) -> float:
    """a . b without BLAS: its threads make one dot product much slower on a loaded machine."""
    return float(np.einsum("i,i->", a, b))


class Matrix(Protocol):
    """What a fit reads of its rows (`learn/sparse.py`: sparse, dense, or the two side by side)."""

    @property
    def shape(self) -> tuple[int, int]: ...

    def take(self, rows: Sequence[int] | np.ndarray) -> Matrix:
        """The rows `rows`, in that order."""
        ...

    def dot(self, w: np.ndarray) -> np.ndarray: ...

    def tdot(self, g: np.ndarray) -> np.ndarray: ...

    def dot_t(self, wt: np.ndarray) -> np.ndarray: ...

    def tdot_t(self, gt: np.ndarray) -> np.ndarray: ...


@dataclass
class Fitted:
    """Coefficients (width, outputs), intercepts (outputs,), and how the optimiser ended."""

    coef: np.ndarray
    intercept: np.ndarray
    iterations: int
    converged: bool


def lbfgs(
    fun: Callable[[np.ndarray], tuple[float, np.ndarray]],
    x0: np.ndarray,
    *,
    gtol: float = GTOL,
    max_iter: int = MAX_ITER,
    memory: int = 10,
    done: Done | None = None,
) -> tuple[np.ndarray, int, bool]:
    """Minimise a smooth convex `fun` (value, gradient) from `x0`: (x, iterations, converged);
    converged once `done(gradient, gtol)` (by default: its largest entry is at most `gtol`)."""
    done = done or largest_at_most
    x = x0.astype(np.float64, copy=True)
    f, g = fun(x)
    pairs: deque[tuple[np.ndarray, np.ndarray, float]] = deque(maxlen=memory)
    for it in range(max_iter):
        if done(g, gtol):
            return x, it, True
        # two-loop recursion: d = -H g
        q = g.copy()
        alphas = []
        for s, y, rho in reversed(pairs):
            a = rho * _dot(s, q)
            alphas.append(a)
            q -= a * y
        if pairs:
            s, y, _ = pairs[-1]
            q *= _dot(s, y) / _dot(y, y)
        else:
            q /= max(math.sqrt(_dot(g, g)), 1.0)
        for (s, y, rho), a in zip(pairs, reversed(alphas), strict=True):
            q += (a - rho * _dot(y, q)) * s
        d = -q
        slope = _dot(g, d)
        if slope >= 0:  # not a descent direction (round-off): restart from the gradient
            pairs.clear()
            d = -g / max(math.sqrt(_dot(g, g)), 1.0)
            slope = _dot(g, d)
        step = 1.0
        for _ in range(40):  # backtracking to the Armijo condition
            x_new = x + step * d
            f_new, g_new = fun(x_new)
            if f_new <= f + 1e-4 * step * slope:
                break
            step *= 0.5
        else:
            return x, it, False
        s, y = x_new - x, g_new - g
        sy = _dot(s, y)
        if sy > 1e-12 * _dot(y, y):
            pairs.append((s, y, 1.0 / sy))
        small = f - f_new <= 1e-12 * max(abs(f), abs(f_new), 1.0)
        x, f, g = x_new, f_new, g_new
        if small:
            return x, it + 1, done(g, gtol * 10)
    return x, max_iter, False


def _log_softmax(z: np.ndarray) -> np.ndarray:
    """Along the last axis."""
    z = z - z.max(axis=1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=1, keepdims=True))


def _log_sigmoid(z: np.ndarray) -> np.ndarray:
    """log(1 / (1 + exp(-z))), stable for large |z|."""
    return -np.logaddexp(0.0, -z)


def balanced_weights(y: np.ndarray, classes: int) -> np.ndarray:
    """scikit-learn's class_weight="balanced": n / (classes * count of the issue's class)."""
    counts = np.bincount(y, minlength=classes).astype(np.float64)
    return (len(y) / (classes * np.maximum(counts, 1.0)))[y]


def fit(
    x: Matrix,
    y: np.ndarray,
    *,
    c: float,
    kind: str,
    classes: int | None = None,
    sample_weight: np.ndarray | None = None,
    warm: tuple[np.ndarray, np.ndarray] | None = None,
    gtol: float = GTOL,
    max_iter: int = MAX_ITER,
    done: Done | None = None,
) -> Fitted:
    """Fit on `x` (rows, width).

    `kind`: "softmax" (y: class indices 0..k-1, k = `classes` >= 3), "binary" (y: 0/1, one
    output) or "ovr" (y: (rows, k) 0/1, k independent outputs). `done`: the stopping test
    (`lbfgs`; a fit in a row span tests the gradient on the terms, `learn/rowspace.py`).
    """
    n, width = x.shape
    if kind == "softmax":
        k = classes if classes is not None else int(y.max()) + 1
        target = np.zeros((k, n))
        target[y, np.arange(n)] = 1.0
    elif kind == "binary":
        k = 1
        target = np.asarray(y, dtype=np.float64).reshape(1, n)
    else:
        target = np.ascontiguousarray(np.asarray(y, dtype=np.float64).T)
        k = target.shape[0]
    sw = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    total = float(sw.sum())
    share = sw / total  # each issue's weight in the mean loss
    lam = 1.0 / (c * total)
    size = width * k

    # Everything is kept as (outputs, rows) and (outputs, width): see `Csr.dot_t`.
    def fun(theta: np.ndarray) -> tuple[float, np.ndarray]:
        wt = theta[:size].reshape(k, width)
        z = x.dot_t(wt) + theta[size:, None]
        if kind == "softmax":
            logp = z - z.max(axis=0)
            logp -= np.log(np.exp(logp).sum(axis=0))
            loss = -_dot((target * logp).sum(axis=0), share)
            resid = (np.exp(logp) - target) * share
        else:
            # log loss of a sigmoid: -(t log p + (1-t) log(1-p)), log(1-p) = log_sigmoid(-z)
            per = target * _log_sigmoid(z) + (1 - target) * _log_sigmoid(-z)
            loss = -_dot(per.sum(axis=0), share)
            resid = (np.exp(_log_sigmoid(z)) - target) * share
        grad = x.tdot_t(resid)
        grad += lam * wt
        value = loss + 0.5 * lam * _dot(theta[:size], theta[:size])
        return value, np.concatenate([grad.ravel(), resid.sum(axis=1)])

    theta0 = np.zeros(size + k)
    if warm is not None:
        theta0[:size] = np.asarray(warm[0]).T.ravel()
        theta0[size:] = warm[1]
    theta, iterations, converged = lbfgs(fun, theta0, gtol=gtol, max_iter=max_iter, done=done)
    coef = np.ascontiguousarray(theta[:size].reshape(k, width).T)
    return Fitted(coef, theta[size:].copy(), iterations, converged)


def probabilities(x: Matrix, fitted: Fitted, kind: str) -> np.ndarray:
    """(rows, classes) for softmax and binary (both classes), (rows, k) for ovr."""
    z = x.dot(fitted.coef) + fitted.intercept
    if kind == "softmax":
        return np.exp(_log_softmax(z))
    p = np.exp(_log_sigmoid(z))
    return np.hstack([1.0 - p, p]) if kind == "binary" else p


def log_loss(proba: np.ndarray, y: np.ndarray) -> float:
    """Mean negative log probability of the true class (softmax/binary probabilities)."""
    picked = proba[np.arange(len(y)), y]
    return float(-np.mean(np.log(np.clip(picked, 1e-15, 1.0))))
