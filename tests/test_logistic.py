"""The numpy fit computes what scikit-learn computes, on the shared data (scikit-learn: tests only).

Features: `learn/features.py` against `TfidfVectorizer`; probabilities: `learn/logistic.py`
against `LogisticRegression` with the same C and class weights, on hf-datasets' labelled issues.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy import sparse
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression

from issue_assistant.config.labels import load_labels
from issue_assistant.learn import logistic
from issue_assistant.learn.features import OPTIONAL, SPECS, TOKEN, fit_features
from issue_assistant.learn.rows import rows_from
from issue_assistant.learn.sparse import Csr, Dense

LABELS = Path(__file__).resolve().parents[1] / "bench" / "hf-datasets.labels.toml"


@pytest.fixture(scope="module")
def hf_rows(hf_snapshot):
    labels = load_labels(LABELS)
    rows = rows_from(hf_snapshot, labels, hf_snapshot.repository.fetched_at)
    types = set(labels.proposable("type"))
    typed = [(r, [n for n in r.labels if n in types]) for r in rows]
    return [(r, t[0]) for r, t in typed if len(t) == 1]


def _scipy(x: Csr):  # noqa: ANN202
    return sparse.csr_matrix((x.data.astype(np.float64), x.indices, x.indptr), shape=x.shape)


def test_features_equal_tfidf_vectorizer(hf_rows):
    docs = [r.doc for r, _ in hf_rows[:800]]
    later = [r.doc for r, _ in hf_rows[800:1000]]
    feats = fit_features(docs)
    matrix = feats.matrix(docs).toarray()
    rows = feats.featurizer().rows(later)
    predicted = np.zeros((len(later), feats.width))
    for i, (cols, vals) in enumerate(rows):
        predicted[i, cols] = vals
    at = 0
    for part in feats.parts:
        spec = part.spec
        vec = TfidfVectorizer(
            analyzer=part.text_part().terms if spec.analyzer in OPTIONAL else spec.analyzer,
            ngram_range=spec.ngram,
            min_df=spec.min_df,
            max_features=spec.max_features,
            sublinear_tf=True,
            token_pattern=TOKEN,
        )
        expected = vec.fit_transform([d[spec.column] for d in docs]).toarray()
        assert part.text_part().vocabulary == {t: int(i) for t, i in vec.vocabulary_.items()}
        assert np.allclose(part.idf, vec.idf_, rtol=0, atol=1e-12)
        width = len(part.kept)
        got = matrix[:, at : at + width]
        assert np.allclose(got, spec.weight * expected, atol=1e-6)  # float32 for the fit
        # the predictor's rows (float64) for issues the fit never saw
        unseen = vec.transform([d[spec.column] for d in later]).toarray()
        assert np.allclose(predicted[:, at : at + width], spec.weight * unseen, atol=1e-12)
        at += width
    assert at == feats.width == sum(len(p.kept) for p in feats.parts)
    assert len(SPECS) == len(feats.parts)


def _sklearn(x, y, c: float, balanced: bool):  # noqa: ANN001, ANN202
    est = LogisticRegression(
        C=c, class_weight="balanced" if balanced else None, tol=1e-10, max_iter=20_000
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(x, y)


@pytest.mark.parametrize(
    ("classes", "balanced", "c"),
    [(None, True, 30.0), (None, False, 3.0), (("bug", "enhancement"), True, 10.0)],
)
def test_probabilities_equal_logistic_regression(hf_rows, classes, balanced, c):
    rows = [(r, t) for r, t in hf_rows if classes is None or t in classes]
    train, test = rows[:500], rows[500:700]
    names = sorted({t for _, t in train})
    y = np.array([names.index(t) for _, t in train])
    feats = fit_features([r.doc for r, _ in train])
    x = feats.matrix([r.doc for r, _ in train])
    xt = feats.matrix([r.doc for r, _ in test])
    kind = "binary" if len(names) == 2 else "softmax"
    weights = logistic.balanced_weights(y, len(names)) if balanced else None
    tight = logistic.fit(
        x, y, c=c, kind=kind, classes=len(names), sample_weight=weights, gtol=1e-8, max_iter=5000
    )
    expected = _sklearn(_scipy(x), y, c, balanced).predict_proba(_scipy(xt))
    got = logistic.probabilities(xt, tight, kind)
    assert got.shape == expected.shape
    assert np.abs(got - expected).max() < 1e-4
    # at the default tolerance (scikit-learn's own default, 1e-4): the same answers
    default = logistic.fit(x, y, c=c, kind=kind, classes=len(names), sample_weight=weights)
    loose = logistic.probabilities(xt, default, kind)
    assert np.abs(loose - expected).max() < 0.05
    assert np.mean(loose.argmax(axis=1) == expected.argmax(axis=1)) >= 0.98


def test_one_vs_rest_equals_one_binary_regression_per_label(hf_rows):
    rows = hf_rows[:400]
    names = ["bug", "enhancement", "dataset request"]
    y = np.array([[1.0 if t == n else 0.0 for n in names] for _, t in rows])
    rnd = np.random.default_rng(1)
    x = Dense(rnd.normal(size=(len(rows), 20)) + y @ rnd.normal(size=(3, 20)))
    got = logistic.fit(x, y, c=1.0, kind="ovr", gtol=1e-9, max_iter=5000)
    proba = logistic.probabilities(x, got, "ovr")
    for j in range(len(names)):
        est = _sklearn(x.values, y[:, j], 1.0, False)
        assert np.abs(proba[:, j] - est.predict_proba(x.values)[:, 1]).max() < 1e-5


def test_a_warm_start_reaches_the_same_optimum(hf_rows):
    rows = hf_rows[:600]
    names = sorted({t for _, t in rows})
    y = np.array([names.index(t) for _, t in rows])
    feats = fit_features([r.doc for r, _ in rows])
    x = feats.matrix([r.doc for r, _ in rows])
    k = len(names)
    small = logistic.fit(x.take(np.arange(500)), y[:500], c=10.0, kind="softmax", classes=k)
    cold = logistic.fit(x, y, c=10.0, kind="softmax", classes=k, gtol=1e-7, max_iter=5000)
    warm = logistic.fit(
        x,
        y,
        c=10.0,
        kind="softmax",
        classes=k,
        gtol=1e-7,
        max_iter=5000,
        warm=(small.coef, small.intercept),
    )
    p_cold = logistic.probabilities(x, cold, "softmax")
    p_warm = logistic.probabilities(x, warm, "softmax")
    assert np.abs(p_cold - p_warm).max() < 1e-3
    assert warm.iterations < cold.iterations
