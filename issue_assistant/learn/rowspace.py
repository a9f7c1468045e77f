"""The logistic regression on the terms, computed in the span of the training rows: few issues,
many terms, the same iterates at a fraction of the cost.

The span of the rows of `X` has an orthonormal basis `V` with `X @ V` a dense (rows x rank)
matrix, the `Factor` (from `K = X @ X.T`: `V = X.T @ inv(L.T)` and `X @ V = L` for its Cholesky
factor `L`). Every gradient of the objective on the terms is `X.T @ residuals + penalty * W`, so
L-BFGS started in the span stays there, and since it only adds vectors and takes inner products,
its iterates on the factor are the ones on the terms read in the basis `V`. A warm start from an
earlier fit has a part outside the span, which only the penalty moves, always along itself: one
more coordinate per output (a column of zeros in the factor) carries it. The stopping test, the
largest entry of the gradient on the terms, does not carry over: `Settled` computes it (exactly,
and cheaply from the entries that were largest at its last full look while they are over the
bound). So a fit on the factor returns what the fit on the terms returns (to 1e-8 on float64
features, `tests/test_rowspace.py`; the fit's float32 products on the terms round differently),
each step costing two small dense products instead of two passes over every nonzero.

`RowSpace` is built once per feature matrix of at most `MAX_ROWS` rows (evaluate's buckets, a
repository's first thousand or two issues); `learn/heads.py` fits a group's rows and folds on its
factors. A longer history keeps fitting on the terms: there the dense factor costs more.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from issue_assistant.learn.sparse import Csr, stable_order

MAX_ROWS = 2000
# Columns in at least this many rows go through one dense product; the rest, pair by pair.
DENSE_FROM = 32
PAIRS_AT_ONCE = 1 << 21
# How small against K's largest a direction may be before the span leaves it out (rows that are
# a combination of others): Cholesky is kept only while each pivot stays above it, and otherwise
# the eigenvectors under it are dropped.
RCOND = 1e-10
TRACKED = 32  # gradient entries on the terms checked before all of them
BLOCK = 128  # rows per step of a triangular solve


def gram(x: Csr) -> np.ndarray:
    """`X @ X.T` in float64: frequent columns through a dense product, the others by the pairs of
    rows they join."""
    n, width = x.shape
    cols, rows, vals = x.indices, x.row_ids(), x.data.astype(np.float64)
    df = np.bincount(cols, minlength=width)
    frequent = df[cols] >= DENSE_FROM
    kept = np.flatnonzero(df >= DENSE_FROM)
    where = np.zeros(width, dtype=np.intp)
    where[kept] = np.arange(len(kept))
    block = np.zeros((n, len(kept)))
    block[rows[frequent], where[cols[frequent]]] = vals[frequent]
    out = block @ block.T
    flat = out.reshape(-1)
    c, r, v = cols[~frequent], rows[~frequent].astype(np.int64), vals[~frequent]
    order = stable_order(c)
    c, r, v = c[order], r[order], v[order]
    starts = np.flatnonzero(np.r_[True, c[1:] != c[:-1]]) if len(c) else np.zeros(0, np.intp)
    sizes = np.diff(np.r_[starts, len(c)])
    keys: list[np.ndarray] = []
    weights: list[np.ndarray] = []
    held = 0
    for size in np.unique(sizes):
        first = starts[sizes == size]
        if size == 1:  # a column of one row adds to its diagonal alone
            np.add.at(flat, r[first] * (n + 1), v[first] ** 2)
            continue
        at = first[:, None] + np.arange(size)
        rr, vv = r[at], v[at]
        keys.append((rr[:, :, None] * n + rr[:, None, :]).ravel())
        weights.append((vv[:, :, None] * vv[:, None, :]).ravel())
        held += keys[-1].size
        if held >= PAIRS_AT_ONCE:
            flat += np.bincount(np.concatenate(keys), np.concatenate(weights), minlength=n * n)
            keys, weights, held = [], [], 0
    if keys:
        flat += np.bincount(np.concatenate(keys), np.concatenate(weights), minlength=n * n)
    return out


class RowSpace:
    """The span of a feature matrix's rows: its factor, and the way back to the terms.

    `K` of the distinct rows with terms is factored by Cholesky, `K = L @ L.T` (the basis
    `V = X.T @ inv(L.T)`, the factor `L`); where that fails or is barely definite, by its
    eigenvectors (`V = X.T @ U / sqrt(S)`, the factor `U sqrt(S)`, near-null directions left out).
    A repeated row reads its first's factor row; a row without terms, zeros.
    """

    def __init__(self, x: Csr) -> None:
        first: dict[bytes, int] = {}
        owner = np.full(x.shape[0], -1, dtype=np.int64)
        distinct: list[int] = []
        for i in range(x.shape[0]):
            a, b = x.indptr[i], x.indptr[i + 1]
            if a == b:
                continue
            key = x.indices[a:b].tobytes() + x.data[a:b].tobytes()
            if key not in first:
                first[key] = len(distinct)
                distinct.append(i)
            owner[i] = first[key]
        self.x = x.take(distinct)  # the distinct rows with terms
        k = gram(self.x)
        self.basis: Triangular | Eigen = _factored(k)
        padded = np.vstack([self.basis.factor, np.zeros((1, self.basis.rank))])
        self.factor = padded[owner]  # -1: the zero row

    def up(self, b: np.ndarray) -> np.ndarray:
        """`inv(L.T) @ b` (or `U / sqrt(S) @ b`): span coefficients to the rows' dual weights."""
        return self.basis.solve(b, upper=True)

    def down(self, b: np.ndarray) -> np.ndarray:
        """`inv(L) @ b` (or `(U / sqrt(S)).T @ b`): the transpose of `up`."""
        return self.basis.solve(b, upper=False)

    @property
    def rank(self) -> int:
        return int(self.factor.shape[1])

    @staticmethod
    def fits(x: Csr) -> bool:
        """Whether fitting `x` in its row span is the cheaper way."""
        n, width = x.shape
        return 0 < n <= MAX_ROWS and n < width

    def rows(self, rows: Sequence[int] | np.ndarray) -> Factor:
        """The fit's features for rows `rows` of `x`."""
        return Factor(self.factor[np.asarray(rows, dtype=np.int64)], self)

    def on_terms(self, coef: np.ndarray) -> np.ndarray:
        """`V @ coef`: coefficients in the span (rank, k) on the terms (width, k)."""
        return self.x.tdot(self.up(coef))

    def warm_start(self, factor: Factor, coef: np.ndarray) -> tuple[Factor, np.ndarray]:
        """`factor` with a coordinate per output for what `coef` (width, k: an earlier fit's) has
        outside the span, and `coef` in its coordinates: the fit's start on the terms, exactly."""
        inside = self.down(self.x.dot(coef))  # V.T @ coef
        outside = coef - self.on_terms(inside)
        norms = np.sqrt(np.einsum("ij,ij->j", outside, outside))
        directions = outside / np.where(norms > 0, norms, 1.0)
        values = np.hstack([factor.values, np.zeros((factor.shape[0], 1))])
        return Factor(values, self, directions), np.vstack([inside, norms])


@dataclass
class Factor:
    """Rows of the span's factor: the features a fit in the span reads (a logistic `Matrix`);
    with `directions` (width, k), its last column is each output's coordinate outside the span."""

    values: np.ndarray  # (rows, rank or rank + 1)
    space: RowSpace = field(repr=False)
    directions: np.ndarray | None = field(default=None, repr=False)

    @property
    def shape(self) -> tuple[int, int]:
        return self.values.shape  # type: ignore[return-value]

    def take(self, rows: Sequence[int] | np.ndarray) -> Factor:
        return Factor(self.values[np.asarray(rows, dtype=np.int64)], self.space, self.directions)

    def dot(self, w: np.ndarray) -> np.ndarray:
        return self.values @ w

    def tdot(self, g: np.ndarray) -> np.ndarray:
        return self.values.T @ g

    def dot_t(self, wt: np.ndarray) -> np.ndarray:
        return wt @ self.values.T

    def tdot_t(self, gt: np.ndarray) -> np.ndarray:
        return gt @ self.values

    def on_terms(self, coef: np.ndarray) -> np.ndarray:
        """Coefficients of a fit on this factor (columns, k) on the terms (width, k)."""
        rank = self.space.rank
        out = self.space.on_terms(coef[:rank])
        if self.directions is not None:
            out += self.directions * coef[rank]
        return out

    def settled(self, outputs: np.ndarray | None = None) -> Settled:
        """The stopping test of a fit on this factor, as on the terms (`Settled`)."""
        directions = self.directions
        if directions is not None and outputs is not None:
            directions = directions[:, outputs]
        return Settled(self.space, directions)


@dataclass
class Settled:
    """Whether the gradient of a fit on a factor has every entry on the terms at most `tol`
    (`logistic.lbfgs`'s `done`): the intercepts' entries, then the `TRACKED` entries on the terms
    that were largest at the last full look, then, only while those are under the bound, all."""

    space: RowSpace
    directions: np.ndarray | None  # (width, k): the outputs' directions outside the span
    _tracked: np.ndarray | None = field(default=None, repr=False)
    _basis: np.ndarray | None = field(default=None, repr=False)  # V's tracked rows (tracked, rank)

    def __call__(self, gradient: np.ndarray, tol: float) -> bool:
        rank = self.space.rank
        columns = rank + (self.directions is not None)
        k = len(gradient) // (columns + 1)
        span = gradient[: k * columns].reshape(k, columns)
        if float(np.max(np.abs(gradient[k * columns :]), initial=0.0)) > tol:
            return False
        outside = span[:, rank] if self.directions is not None else None
        if self._tracked is not None and self._basis is not None:
            part = span[:, :rank] @ self._basis.T
            if outside is not None:
                part += outside[:, None] * self.directions[self._tracked].T  # type: ignore[index]
            if float(np.max(np.abs(part), initial=0.0)) > tol:
                return False
        whole = self.space.x.tdot_t(self.space.up(span[:, :rank].T).T)
        if outside is not None:
            whole += outside[:, None] * self.directions.T  # type: ignore[union-attr]
        largest = np.max(np.abs(whole), axis=0) if whole.size else np.zeros(0)
        if len(largest) > TRACKED:
            self._tracked = np.argpartition(largest, -TRACKED)[-TRACKED:]
            self._basis = self.space.down(self.space.x.columns(self._tracked)).T
        return float(np.max(largest, initial=0.0)) <= tol


def _factored(k: np.ndarray) -> Triangular | Eigen:
    """`K`'s Cholesky factor where it holds with every pivot above `RCOND`, else its
    eigenvectors with the near-null directions left out."""
    if len(k):
        try:
            lower = np.linalg.cholesky(k)
        except np.linalg.LinAlgError:
            pass
        else:
            if float(np.min(np.diag(lower))) ** 2 > RCOND * float(np.max(np.diag(k))):
                return Triangular(lower)
    s, u = np.linalg.eigh(k)
    keep = s > RCOND * max(float(s[-1]), 0.0) if len(s) else np.zeros(0, bool)
    return Eigen(u[:, keep], np.sqrt(s[keep]))


class Eigen:
    """`K = U S U.T` with the near-null directions left out: the factor `U sqrt(S)`, and solves
    with it by products with `U / sqrt(S)`."""

    def __init__(self, vectors: np.ndarray, root: np.ndarray) -> None:
        self.factor = vectors * root
        self.lift = vectors / root

    @property
    def rank(self) -> int:
        return int(self.factor.shape[1])

    def solve(self, b: np.ndarray, *, upper: bool) -> np.ndarray:
        """`lift @ b`, or `lift.T @ b` without `upper`: what `Triangular.solve` is for `L`."""
        return self.lift @ b if upper else self.lift.T @ b


class Triangular:
    """`K = L L.T` (Cholesky): the factor `L`, lower triangular, and solves with it and its
    transpose, block by block, each diagonal block inverted once (numpy's `solve` would factor
    `L` again, at the cost of a cube, every time)."""

    def __init__(self, lower: np.ndarray) -> None:
        self.factor = lower
        n = len(lower)
        self.blocks = [(a, min(a + BLOCK, n)) for a in range(0, n, BLOCK)]
        self.inverses = [np.linalg.inv(lower[a:z, a:z]) for a, z in self.blocks]

    @property
    def rank(self) -> int:
        return len(self.factor)

    def solve(self, b: np.ndarray, *, upper: bool) -> np.ndarray:
        """`inv(L) @ b`, or `inv(L.T) @ b` with `upper`."""
        lower = self.factor
        out = np.array(b, dtype=np.float64, copy=True).reshape(len(lower), -1)
        steps = list(zip(self.blocks, self.inverses, strict=True))
        for (a, z), inverse in reversed(steps) if upper else steps:
            if upper:  # rows a:z of L.T @ x = b, where L.T[a:z, z:] = L[z:, a:z].T
                out[a:z] -= lower[z:, a:z].T @ out[z:]
                out[a:z] = inverse.T @ out[a:z]
            else:
                out[a:z] -= lower[a:z, :a] @ out[:a]
                out[a:z] = inverse @ out[a:z]
        return out.reshape(np.shape(b))
