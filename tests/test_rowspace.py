"""A fit in the span of the training rows is the fit on the terms (`learn/rowspace.py`).

On features in float64 (the fit's own are float32, whose products round differently), the fit on
the factor takes the same steps as the fit on the terms and stops at the same one.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import sparse

from issue_assistant.config.labels import load_labels
from issue_assistant.learn import heads, rowspace
from issue_assistant.learn.features import fit_features
from issue_assistant.learn.fitting import Fitting
from issue_assistant.learn.rows import rows_from
from issue_assistant.learn.rowspace import Eigen, RowSpace, Triangular, gram
from issue_assistant.learn.sparse import Csr

LABELS = Path(__file__).resolve().parents[1] / "bench" / "hf-datasets.labels.toml"


@pytest.fixture(scope="module")
def typed(hf_snapshot):
    """(features of 500 typed issues in float64, their type index, the type names, the area
    targets of three labels)."""
    labels = load_labels(LABELS)
    rows = rows_from(hf_snapshot, labels, hf_snapshot.repository.fetched_at)
    types = set(labels.proposable("type"))
    one = [(r, t) for r in rows if len(t := [n for n in r.labels if n in types]) == 1][:500]
    names = sorted({t[0] for _, t in one})
    docs = [r.doc for r, _ in one]
    x = fit_features(docs).matrix(docs)
    x = Csr(x.indptr, x.indices, x.data.astype(np.float64), x.width)
    areas = ("dataset-viewer", "streaming", "documentation")
    multi = np.array([[float(a in r.labels) for a in areas] for r, _ in one])
    return x, np.array([names.index(t[0]) for _, t in one]), names, multi


def _csr(dense: np.ndarray) -> Csr:
    m = sparse.csr_matrix(dense)
    return Csr(m.indptr.astype(np.int64), m.indices.astype(np.int32), m.data, dense.shape[1])


@given(
    st.integers(1, 40),
    st.integers(1, 60),
    st.floats(0.0, 0.95),
    st.integers(0, 2**31 - 1),
    st.integers(1, 6),
)
def test_gram_is_the_rows_inner_products(rows, width, empty, seed, dense_from):
    rnd = np.random.default_rng(seed)
    dense = rnd.random((rows, width)) * (rnd.random((rows, width)) > empty)
    dense[rnd.integers(rows)] = 0.0  # a row with no terms
    x = _csr(dense)
    shipped = rowspace.DENSE_FROM
    rowspace.DENSE_FROM = dense_from  # frequent columns densely, the rest by pairs
    try:
        got = gram(x)
    finally:
        rowspace.DENSE_FROM = shipped
    assert np.allclose(got, dense @ dense.T, atol=1e-12)


@pytest.mark.parametrize("n", [1, 7, rowspace.BLOCK, rowspace.BLOCK + 1, 3 * rowspace.BLOCK - 5])
def test_triangular_solves_as_numpy_does(n):
    rnd = np.random.default_rng(n)
    a = rnd.normal(size=(n, n))
    lower = np.linalg.cholesky(a @ a.T + n * np.eye(n))
    b = rnd.normal(size=(n, 3))
    solver = Triangular(lower)
    assert np.allclose(solver.solve(b, upper=False), np.linalg.solve(lower, b))
    assert np.allclose(solver.solve(b, upper=True), np.linalg.solve(lower.T, b))
    assert solver.solve(b[:, 0], upper=True).shape == (n,)


def _both(x, y, kind, k, c, rows, warm=None):  # noqa: ANN001, ANN202
    """(the fit on the terms, the fit on the factor with its coefficients on the terms)."""
    terms = heads._fit(x.take(rows), y, kind, k, c, warm)
    space = RowSpace(x)
    factor = space.rows(rows)
    start = warm
    if warm is not None:
        factor, inside = space.warm_start(factor, warm[0])
        start = (inside, warm[1])
    spanned = heads._fit(factor, y, kind, k, c, start)
    return terms, spanned, factor.on_terms(spanned.coef)


@pytest.mark.parametrize("warm", [False, True])
@pytest.mark.parametrize("c", [3.0, 30.0])
def test_the_factor_takes_the_steps_of_the_fit_on_the_terms(typed, c, warm):
    x, y, names, _ = typed
    k = len(names)
    rows = np.arange(0, 500, 3) if warm else np.arange(400)  # a group's or a fold's rows
    start = None
    if warm:  # an earlier fit's coefficients: mostly outside this span
        start = (np.random.default_rng(1).normal(scale=0.05, size=(x.width, k)), np.zeros(k))
    terms, spanned, coef = _both(x, y[rows], "softmax", k, c, rows, start)
    assert spanned.iterations == terms.iterations
    assert spanned.converged == terms.converged
    assert np.abs(coef - terms.coef).max() < 1e-7
    assert np.abs(spanned.intercept - terms.intercept).max() < 1e-7


def test_one_vs_rest_in_the_span_keeps_the_constant_labels(typed):
    x, _, _, multi = typed
    rows = np.arange(300)
    target = multi[rows].copy()
    target[:, 2] = 0.0  # a label no issue of these has: a constant, as on the terms
    warm = (np.random.default_rng(2).normal(scale=0.05, size=(x.width, 3)), np.zeros(3))
    terms, spanned, coef = _both(x, target, "ovr", 3, 10.0, rows, warm)
    assert spanned.iterations == terms.iterations
    assert np.abs(coef - terms.coef).max() < 1e-7
    assert spanned.intercept[2] == terms.intercept[2] == -np.inf


def test_the_stopping_test_reads_the_gradient_on_the_terms(typed):
    x, _, _, _ = typed
    space = RowSpace(x)
    rnd = np.random.default_rng(5)
    k, rank = 3, space.rank
    span = rnd.normal(size=(k, rank)) * 1e-3
    intercepts = np.zeros(k)
    on_terms = space.on_terms(span.T)  # (width, k): the same gradient on the terms
    largest = float(np.abs(on_terms).max())
    settled = space.rows(np.arange(10)).settled()
    gradient = np.concatenate([span.ravel(), intercepts])
    for tol in (largest * 0.999, largest * 1.001, largest * 0.5, largest * 2):
        assert settled(gradient, tol) == (largest <= tol)  # its second look uses what it tracks
    assert not settled(np.concatenate([span.ravel(), [0.0, 1.0, 0.0]]), largest * 2)


def test_a_warm_start_is_the_same_coefficients_on_the_terms(typed):
    x, _, names, _ = typed
    space = RowSpace(x)
    k = len(names)
    coef = np.random.default_rng(3).normal(size=(x.width, k))
    factor, start = space.warm_start(space.rows(np.arange(50)), coef)
    assert factor.shape == (50, space.rank + 1)
    assert np.allclose(factor.on_terms(start), coef, atol=1e-9)
    assert np.allclose(factor.dot(start), x.take(np.arange(50)).dot(coef), atol=1e-9)


def test_repeated_and_empty_rows_leave_the_span_smaller():
    rnd = np.random.default_rng(3)
    dense = rnd.random((30, 80)) * (rnd.random((30, 80)) > 0.8)
    dense[5] = dense[4]  # the same issue twice
    dense[9] = 0.0  # an issue with no terms
    x = _csr(dense)
    space = RowSpace(x)
    assert space.rank == 28 and isinstance(space.basis, Triangular)  # Cholesky of the distinct rows
    y = (dense[:, :40].sum(axis=1) > dense[:, 40:].sum(axis=1)).astype(np.int64)
    terms, spanned, coef = _both(x, y, "binary", 2, 10.0, np.arange(30))
    assert spanned.iterations == terms.iterations
    assert np.abs(coef - terms.coef).max() < 1e-7


def test_a_group_fit_in_the_span_is_the_fit_on_the_terms(typed):
    x, y, names, _ = typed
    rows = list(range(0, 500, 2))  # a group's issues: some of the fit's rows
    ys = [names[i] for i in y[rows]]
    heads_ = [
        heads.fit_group("type", x, None, None, rows, names, ys, Fitting(), single=True, space=s)
        for s in (None, RowSpace(x))
    ]
    assert heads_[0].c == heads_[1].c  # the same C from the same cross-validation
    assert np.abs(heads_[0].head.coef - heads_[1].head.coef).max() < 1e-6  # float32 kept


def test_only_a_short_wide_history_is_fit_in_its_span():
    wide = _csr(np.eye(5, 9))
    assert RowSpace.fits(wide)
    assert not RowSpace.fits(_csr(np.eye(9, 5)))  # more rows than terms
    shipped = rowspace.MAX_ROWS
    rowspace.MAX_ROWS = 4
    try:
        assert not RowSpace.fits(wide)
    finally:
        rowspace.MAX_ROWS = shipped


def test_rows_that_depend_on_others_are_factored_by_their_eigenvectors():
    rnd = np.random.default_rng(4)
    dense = rnd.random((12, 40)) * (rnd.random((12, 40)) > 0.6)
    dense[11] = dense[0] + dense[1]  # distinct, but in the span of two others
    x = _csr(dense)
    space = RowSpace(x)
    assert isinstance(space.basis, Eigen) and space.rank == 11
    y = (dense[:, :20].sum(axis=1) > dense[:, 20:].sum(axis=1)).astype(np.int64)
    terms, spanned, coef = _both(x, y, "binary", 2, 10.0, np.arange(12))
    assert spanned.iterations == terms.iterations
    assert np.abs(coef - terms.coef).max() < 1e-7
