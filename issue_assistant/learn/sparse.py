"""A compressed sparse row matrix in numpy alone: what fitting a linear model on TF-IDF needs.

Rows are issues, columns terms. Only the products the logistic regression uses are here:
`X @ W` and `X.T @ G` for a dense `W`/`G` of a few columns (one per class), computed in chunks
of nonzeros so a large history never makes a (nonzeros x classes) temporary at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

CHUNK = 1 << 21  # nonzeros per step of a product
# `dot_rows`: a column on this many rows of the other matrix goes through the dense product
DENSE_FROM = 32
ROWS_AT_ONCE = 512  # rows of `dot_rows`'s own matrix per step


def stable_order(keys: np.ndarray) -> np.ndarray:
    """`np.argsort(keys, kind="stable")` for non-negative integer keys (column ids): the keys made
    unique by their position and sorted by numpy's default sort, which is not stable but is
    three times as fast as its stable one on integers here."""
    n = len(keys)
    return np.argsort(keys.astype(np.int64) * max(n, 1) + np.arange(n, dtype=np.int64))


@dataclass
class Csr:
    """`data[indptr[i]:indptr[i+1]]` are row i's values at columns `indices[...]`."""

    indptr: np.ndarray  # (rows + 1,) int64
    indices: np.ndarray  # (nonzeros,) int32
    data: np.ndarray  # (nonzeros,) float32 or float64
    width: int
    _by_column: tuple[np.ndarray, ...] | None = field(default=None, repr=False)
    _rows: np.ndarray | None = field(default=None, repr=False)
    _intp: np.ndarray | None = field(default=None, repr=False)

    @property
    def shape(self) -> tuple[int, int]:
        return len(self.indptr) - 1, self.width

    @property
    def nnz(self) -> int:
        return int(self.indptr[-1])

    def row_ids(self) -> np.ndarray:
        if self._rows is None:
            self._rows = np.repeat(np.arange(self.shape[0], dtype=np.int32), np.diff(self.indptr))
        return self._rows

    def take(self, rows: Sequence[int] | np.ndarray) -> Csr:
        """The rows `rows`, in that order."""
        rows = np.asarray(rows, dtype=np.int64)
        starts, ends = self.indptr[rows], self.indptr[rows + 1]
        lengths = ends - starts
        indptr = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(lengths, out=indptr[1:])
        # positions of the kept nonzeros: each row's start repeated, plus 0..length-1
        offsets = np.arange(indptr[-1], dtype=np.int64) - np.repeat(indptr[:-1], lengths)
        pos = np.repeat(starts, lengths) + offsets
        return Csr(indptr, self.indices[pos], self.data[pos], self.width)

    def _columns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The nonzeros in column order: (row of each, value of each, each nonempty column's
        first position, which column that is)."""
        if self._by_column is None:
            order = stable_order(self.indices)
            cols = self.indices[order]
            first = np.flatnonzero(np.r_[True, cols[1:] != cols[:-1]]) if len(cols) else order
            rows = self.row_ids()[order].astype(np.intp)
            self._by_column = (rows, self.data[order], first, cols[first].astype(np.intp))
        return self._by_column

    def dot(self, w: np.ndarray) -> np.ndarray:
        """`X @ w` for `w` of shape (width, k): shape (rows, k)."""
        return self.dot_t(np.ascontiguousarray(w.T)).T

    def dot_t(self, wt: np.ndarray) -> np.ndarray:
        """`(X @ wt.T).T` for `wt` of shape (k, width): shape (k, rows).

        Transposed because numpy gathers and reduces fastest along the last axis; the products
        are in the matrix's dtype (float32 for the TF-IDF features: twice as fast as float64).
        """
        n = self.shape[0]
        out = np.zeros((wt.shape[0], n))
        if not self.nnz:
            return out
        wt = wt.astype(self.data.dtype, copy=False)
        starts = self.indptr[:-1]
        nonempty = np.flatnonzero(self.indptr[1:] > starts)
        bounds = np.r_[starts[nonempty], self.nnz]
        at = 0
        while at < len(nonempty):  # whole rows per chunk
            stop = int(np.searchsorted(bounds, bounds[at] + CHUNK, side="right")) - 1
            stop = max(stop, at + 1)
            a, b = bounds[at], bounds[stop]
            prod = wt.take(self._cols()[a:b], axis=1)
            prod *= self.data[a:b]
            out[:, nonempty[at:stop]] = np.add.reduceat(prod, bounds[at:stop] - a, axis=1)
            at = stop
        return out

    def _cols(self) -> np.ndarray:
        if self._intp is None:
            self._intp = self.indices.astype(np.intp)
        return self._intp

    def tdot(self, g: np.ndarray) -> np.ndarray:
        """`X.T @ g` for `g` of shape (rows, k): shape (width, k)."""
        return self.tdot_t(np.ascontiguousarray(g.T)).T

    def tdot_t(self, gt: np.ndarray) -> np.ndarray:
        """`(X.T @ gt.T).T` for `gt` of shape (k, rows): shape (k, width)."""
        out = np.zeros((gt.shape[0], self.width))
        if not self.nnz:
            return out
        rows, values, first, cols = self._columns()
        gt = gt.astype(values.dtype, copy=False)
        bounds = np.r_[first, self.nnz]
        at = 0
        while at < len(first):  # whole columns per chunk, so each column is reduced once
            stop = int(np.searchsorted(bounds, bounds[at] + CHUNK, side="right")) - 1
            stop = max(stop, at + 1)
            a, b = bounds[at], bounds[stop]
            prod = gt.take(rows[a:b], axis=1)
            prod *= values[a:b]
            out[:, cols[at:stop]] = np.add.reduceat(prod, first[at:stop] - a, axis=1)
            at = stop
        return out

    def squared_norms(self) -> np.ndarray:
        return np.bincount(self.row_ids(), weights=self.data**2, minlength=self.shape[0])

    def dot_rows(self, other: Csr) -> np.ndarray:
        """`X @ other.T` in float32: each row's products with each of `other`'s rows, shape
        (rows, other's rows). The columns `other` has on `DENSE_FROM` rows or more go through
        one dense product; the others by the pairs of rows they join. For many rows against
        many: `dot_t` reads every nonzero of the matrix once per row of the other."""
        n, m = self.shape[0], other.shape[0]
        out = np.zeros((n, m), dtype=np.float32)
        if not self.nnz or not other.nnz:
            return out
        o_rows, o_values, o_first, o_cols = other._columns()
        o_counts = np.diff(np.r_[o_first, other.nnz])
        slot = np.full(self.width, -1, dtype=np.intp)
        slot[o_cols] = np.arange(len(o_cols))
        dense = np.flatnonzero(o_counts >= DENSE_FROM)
        where = np.full(len(o_cols), -1, dtype=np.intp)
        where[dense] = np.arange(len(dense))
        block = np.zeros((m, len(dense)), dtype=np.float32)
        at_dense = where[slot[other.indices]]  # each nonzero's column in `block`, -1 if none
        in_dense = at_dense >= 0
        block[other.row_ids()[in_dense], at_dense[in_dense]] = other.data[in_dense]
        for start in range(0, n, ROWS_AT_ONCE):
            part = self.take(np.arange(start, min(start + ROWS_AT_ONCE, n)))
            rows, cols, values = part.row_ids(), slot[part.indices], part.data
            shared = cols >= 0
            rows, cols, values = rows[shared], cols[shared], values[shared]
            frequent = where[cols] >= 0
            mine = np.zeros((part.shape[0], len(dense)), dtype=np.float32)
            mine[rows[frequent], where[cols[frequent]]] = values[frequent]
            here = out[start : start + part.shape[0]]
            here += mine @ block.T
            rows, cols, values = rows[~frequent], cols[~frequent], values[~frequent]
            counts = o_counts[cols]
            pair = np.repeat(np.arange(len(cols)), counts)
            offsets = np.arange(len(pair)) - np.repeat(np.cumsum(counts) - counts, counts)
            at = o_first[cols][pair] + offsets
            keys = rows[pair].astype(np.int64) * m + o_rows[at]
            sums = np.bincount(keys, weights=values[pair] * o_values[at], minlength=here.size)
            here += sums.reshape(here.shape).astype(np.float32)
        return out

    def columns(self, cols: np.ndarray) -> np.ndarray:
        """Columns `cols` (distinct), dense: (rows, len(cols)) float64."""
        where = np.full(self.width, -1, dtype=np.intp)
        where[cols] = np.arange(len(cols))
        hit = where[self.indices]
        kept = hit >= 0
        out = np.zeros((self.shape[0], len(cols)))
        out[self.row_ids()[kept], hit[kept]] = self.data[kept]
        return out

    def toarray(self) -> np.ndarray:
        out = np.zeros(self.shape)
        out[self.row_ids(), self.indices] = self.data
        return out


def hstack(parts: Sequence[Csr]) -> Csr:
    """The matrices side by side (same rows): each row's columns part by part."""
    n = parts[0].shape[0]
    lengths = np.zeros(n, dtype=np.int64)
    for p in parts:
        lengths += np.diff(p.indptr)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    indices = np.empty(indptr[-1], dtype=np.int32)
    data = np.empty(indptr[-1], dtype=np.result_type(*[p.data.dtype for p in parts]))
    filled = indptr[:-1].copy()
    offset = 0
    for p in parts:
        counts = np.diff(p.indptr)
        dest = np.repeat(filled, counts) + (
            np.arange(p.nnz, dtype=np.int64) - np.repeat(p.indptr[:-1], counts)
        )
        indices[dest] = p.indices + offset
        data[dest] = p.data
        filled += counts
        offset += p.width
    return Csr(indptr, indices, data, offset)


@dataclass
class Dense:
    """A dense matrix with the same two products (the sentence-embedding features)."""

    values: np.ndarray  # (rows, width)

    @property
    def shape(self) -> tuple[int, int]:
        return self.values.shape  # type: ignore[return-value]

    def take(self, rows: Sequence[int] | np.ndarray) -> Dense:
        return Dense(self.values[np.asarray(rows, dtype=np.int64)])

    # einsum, not BLAS: BLAS threads make these much slower on a loaded machine (logistic._dot)
    def dot(self, w: np.ndarray) -> np.ndarray:
        return np.einsum("ij,jk->ik", self.values, w)

    def tdot(self, g: np.ndarray) -> np.ndarray:
        return np.einsum("ij,ik->jk", self.values, g)

    def dot_t(self, wt: np.ndarray) -> np.ndarray:
        return np.einsum("kj,ij->ki", wt, self.values)

    def tdot_t(self, gt: np.ndarray) -> np.ndarray:
        return np.einsum("ki,ij->kj", gt, self.values)

    def squared_norms(self) -> np.ndarray:
        return np.einsum("ij,ij->i", self.values, self.values)


@dataclass
class Joint:
    """A sparse block and a dense block side by side (TF-IDF, then the embeddings)."""

    sparse: Csr
    dense: Dense

    @property
    def shape(self) -> tuple[int, int]:
        return self.sparse.shape[0], self.sparse.width + self.dense.shape[1]

    def take(self, rows: Sequence[int] | np.ndarray) -> Joint:
        return Joint(self.sparse.take(rows), self.dense.take(rows))

    def dot_t(self, wt: np.ndarray) -> np.ndarray:
        w = self.sparse.width
        return self.sparse.dot_t(wt[:, :w]) + self.dense.dot_t(wt[:, w:])

    def tdot_t(self, gt: np.ndarray) -> np.ndarray:
        return np.hstack([self.sparse.tdot_t(gt), self.dense.tdot_t(gt)])

    def dot(self, w: np.ndarray) -> np.ndarray:
        return self.dot_t(np.ascontiguousarray(w.T)).T

    def tdot(self, g: np.ndarray) -> np.ndarray:
        return self.tdot_t(np.ascontiguousarray(g.T)).T
