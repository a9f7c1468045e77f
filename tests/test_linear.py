"""The numpy predictor answers what scikit-learn's fitted objects answer, on any text."""

from __future__ import annotations

import random
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from issue_assistant.learn.features import featurizer, matrix
from issue_assistant.learn.linear import compile_featurizer, compile_head
from issue_assistant.learn.model import _estimator

WORDS = [
    "crash",
    "error",
    "KeyError",
    "fails",
    "add",
    "support",
    "option",
    "docs",
    "cli",
    "parser",
    "été",
    "naïve",
    "ß",
    "İstanbul",
]


def corpus(n: int, seed: int = 3) -> list[tuple[str, str]]:
    rnd = random.Random(seed)
    docs = []
    for _ in range(n):
        title = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(1, 6)))
        body = "  ".join(rnd.choice(WORDS) for _ in range(rnd.randint(0, 30)))
        docs.append((title, body))
    return docs


DOCS = corpus(120)
FITTED = featurizer().fit(matrix(DOCS))
FEATS = compile_featurizer(FITTED)


def _sparse_rows(docs: list[tuple[str, str]]) -> np.ndarray:
    dense = np.zeros((len(docs), FEATS.width))
    for i, (cols, vals) in enumerate(FEATS.rows(docs)):
        np.add.at(dense[i], cols, vals)
    return dense


text = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=120
) | st.lists(st.sampled_from(WORDS), max_size=12).map(" ".join)


@settings(max_examples=200, deadline=None)
@given(title=text, body=text)
def test_features_equal_scikit_learn_on_any_text(title, body):
    expected = FITTED.transform(matrix([(title, body)])).toarray()
    assert np.allclose(_sparse_rows([(title, body)]), expected, atol=1e-12)


def _targets(kind: str) -> list:
    names = ["bug", "feature", "question"]
    if kind == "multiclass":
        return [names[i % 3] for i in range(len(DOCS))]
    if kind == "binary":
        return [names[i % 2] for i in range(len(DOCS))]
    # multi-label: two ordinary columns, one never set (scikit-learn's constant predictor)
    return [[i % 2, 1 if i % 5 == 0 else 0, 0] for i in range(len(DOCS))]


@pytest.mark.parametrize(
    ("kind", "group"), [("multiclass", "type"), ("binary", "type"), ("ovr", "area")]
)
def test_probabilities_equal_scikit_learn(kind, group):
    x = FITTED.transform(matrix(DOCS))
    est = _estimator(group)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(x, np.array(_targets(kind)))
    head = compile_head(est, FEATS.width)
    assert head.kind == kind
    fresh = corpus(40, seed=11)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = est.predict_proba(FITTED.transform(matrix(fresh)))
    got = head.probabilities(FEATS.rows(fresh))
    assert got.shape == expected.shape
    # coefficients are kept as float32: agreement to about 1e-6
    assert np.allclose(got, expected, atol=1e-5)
    if kind == "ovr":
        assert np.all(got[:, 2] == 0.0)  # the never-set label is never proposed


def test_answering_imports_no_scikit_learn(tmp_path):
    """A saved model is loaded and answers in a process that never imports scikit-learn."""
    from datetime import UTC, datetime

    from issue_assistant.config import LabelsConfig
    from issue_assistant.learn import store
    from issue_assistant.learn.model import Row, fit

    labels = LabelsConfig.model_validate({"type": [{"name": "bug"}, {"name": "feature"}]})
    rows = [
        Row(i, datetime(2024, 1, 1, tzinfo=UTC).replace(minute=i % 60, hour=i // 60), t, b, lab)
        for i, ((t, b), lab) in enumerate(
            zip(DOCS, [frozenset({n}) for n in _targets("binary")], strict=True)
        )
    ]
    model = fit(rows, labels, datetime(2025, 1, 1, tzinfo=UTC))
    store.save_model(model, tmp_path, store.labels_key(labels))
    expected = model.probabilities_many([DOCS[0]])[0]["type"]["bug"]
    code = (
        "import sys\n"
        "from issue_assistant.config import LabelsConfig\n"
        "from issue_assistant.learn import store\n"
        "labels = LabelsConfig.model_validate("
        "{'type': [{'name': 'bug'}, {'name': 'feature'}]})\n"
        f"m = store.load_model({str(tmp_path)!r}, store.labels_key(labels))\n"
        f"p = m.probabilities_many([{DOCS[0]!r}])[0]['type']['bug']\n"
        "print(repr(p), 'sklearn' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    prob, imported = out.stdout.split()
    assert float(prob) == pytest.approx(expected, abs=1e-12)
    assert imported == "False"
