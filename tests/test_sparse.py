"""The products of rows with rows (`learn/sparse.Csr.dot_rows`) and the vote that reads them
(`learn/neighbours.Neighbours.label_shares`): the same as a dense product, whichever way each
column goes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import sparse as scipy_sparse

from issue_assistant.config.labels import load_labels
from issue_assistant.learn import neighbours
from issue_assistant.learn import sparse as learn_sparse
from issue_assistant.learn.features import fit_features
from issue_assistant.learn.neighbours import Neighbours
from issue_assistant.learn.rows import rows_from
from issue_assistant.learn.sparse import Csr, Dense, Joint, stable_order

LABELS = Path(__file__).resolve().parents[1] / "bench" / "hf-datasets.labels.toml"


def _csr(dense: np.ndarray) -> Csr:
    m = scipy_sparse.csr_matrix(dense.astype(np.float32))
    return Csr(m.indptr.astype(np.int64), m.indices.astype(np.int32), m.data, dense.shape[1])


@given(st.lists(st.integers(0, 2**20), max_size=300), st.booleans())
def test_the_order_of_column_ids_is_numpys_stable_one(keys, few):
    """Many equal ids (`few`: a handful of distinct ones) keep their positions' order."""
    ids = np.asarray([k % 4 for k in keys] if few else keys, dtype=np.int32)
    assert np.array_equal(stable_order(ids), np.argsort(ids, kind="stable"))


@given(st.integers(1, 12), st.integers(1, 9), st.integers(1, 5), st.integers(0, 2**31 - 1))
def test_every_matrix_a_fit_reads_multiplies_as_its_dense_values(n, width, extra, seed):
    """Each of `logistic.Matrix`'s products on the terms alone, the embeddings alone and the two
    side by side is the product of the dense matrix they hold, taken rows included."""
    rnd = np.random.default_rng(seed)
    terms = (rnd.random((n, width)) * (rnd.random((n, width)) > 0.5)).astype(np.float32)
    vectors = rnd.random((n, extra))
    k = 3
    for x, values in (
        (_csr(terms), terms.astype(np.float64)),
        (Dense(vectors), vectors),
        (Joint(_csr(terms), Dense(vectors)), np.hstack([terms, vectors])),
    ):
        cols = values.shape[1]
        w, g = rnd.random((cols, k)), rnd.random((n, k))
        assert x.shape == values.shape
        assert np.allclose(x.dot(w), values @ w) and np.allclose(x.dot_t(w.T), (values @ w).T)
        assert np.allclose(x.tdot(g), values.T @ g) and np.allclose(x.tdot_t(g.T), (values.T @ g).T)
        rows = rnd.integers(0, n, size=4)
        assert np.allclose(x.take(rows).dot(w), values[rows] @ w)


@given(
    st.integers(0, 30),
    st.integers(1, 30),
    st.integers(1, 50),
    st.floats(0.0, 0.95),
    st.integers(0, 2**31 - 1),
    st.integers(1, 6),
    st.integers(1, 7),
)
def test_rows_times_rows_is_the_dense_product(n, m, width, empty, seed, dense_from, at_once):
    rnd = np.random.default_rng(seed)
    a = rnd.random((n, width)) * (rnd.random((n, width)) > empty)
    b = rnd.random((m, width)) * (rnd.random((m, width)) > empty)
    b[rnd.integers(m)] = 0.0  # a row with no terms
    shipped = learn_sparse.DENSE_FROM, learn_sparse.ROWS_AT_ONCE
    # columns on few rows through the dense product, the rest by pairs; rows in small steps
    learn_sparse.DENSE_FROM, learn_sparse.ROWS_AT_ONCE = dense_from, at_once
    try:
        got = _csr(a).dot_rows(_csr(b))
    finally:
        learn_sparse.DENSE_FROM, learn_sparse.ROWS_AT_ONCE = shipped
    assert got.shape == (n, m) and got.dtype == np.float32
    want = a.astype(np.float32).astype(np.float64) @ b.astype(np.float32).astype(np.float64).T
    assert np.allclose(got, want, rtol=1e-5, atol=1e-5)


def test_the_vote_of_many_issues_is_the_vote_of_each(hf_snapshot):
    """hf-datasets' newest 1,500 typed issues: the 600 newest voted on by the others, all at once
    (one product of the two matrices) and one by one, give the same shares."""
    labels = load_labels(LABELS)
    rows = rows_from(hf_snapshot, labels, hf_snapshot.repository.fetched_at)[-1500:]
    types = set(labels.proposable("type"))
    gold = [next(iter(r.labels & types)) if len(r.labels & types) == 1 else None for r in rows]
    docs = [r.doc for r in rows]
    x = fit_features(docs[:900]).matrix(docs)
    voters = Neighbours(x.take(np.arange(900)), {"type": gold[:900]})
    query = x.take(np.arange(900, 1500))
    assert query.shape[0] >= neighbours.MANY
    together = voters.label_shares("type", query)
    alone = [voters.label_shares("type", query.take([i]))[0] for i in range(query.shape[0])]
    assert sum(bool(s) for s in together) > 500
    for a, b in zip(together, alone, strict=True):
        assert a.keys() == b.keys()
        assert all(a[n] == pytest.approx(b[n], abs=1e-5) for n in a)
