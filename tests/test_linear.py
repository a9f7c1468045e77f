"""The numpy predictor answers what the fit (and scikit-learn's TF-IDF) answers, on any text;
neither fitting nor answering imports scikit-learn or scipy."""

from __future__ import annotations

import functools
import random
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from issue_assistant.learn import logistic
from issue_assistant.learn.features import OPTIONAL, TOKEN, fit_features
from issue_assistant.learn.linear import LinearHead
from issue_assistant.learn.text import Doc

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


def corpus(n: int, seed: int = 3) -> list[Doc]:
    rnd = random.Random(seed)
    docs = []
    for _ in range(n):
        title = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(1, 6)))
        body = "  ".join(rnd.choice(WORDS) for _ in range(rnd.randint(0, 30)))
        docs.append((title, body, ""))
    return docs


DOCS = corpus(120)
FEATURES = fit_features(DOCS)
FEATS = FEATURES.featurizer()


def _sparse_rows(docs: list[Doc]) -> np.ndarray:
    dense = np.zeros((len(docs), FEATS.width))
    for i, (cols, vals) in enumerate(FEATS.rows(docs)):
        np.add.at(dense[i], cols, vals)
    return dense


@functools.cache
def _vectorizers() -> list:
    """scikit-learn's TfidfVectorizer per block, fit on DOCS (the reference)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    out = []
    for part in FEATURES.parts:
        spec = part.spec
        vec = TfidfVectorizer(
            analyzer=part.text_part().terms if spec.analyzer in OPTIONAL else spec.analyzer,
            ngram_range=spec.ngram,
            min_df=spec.min_df,
            max_features=spec.max_features,
            sublinear_tf=True,
            token_pattern=TOKEN,
        )
        out.append((spec, vec.fit([d[spec.column] for d in DOCS])))
    return out


def _reference(docs: list[Doc]) -> np.ndarray:
    return np.hstack(
        [
            spec.weight * vec.transform([d[spec.column] for d in docs]).toarray()
            for spec, vec in _vectorizers()
        ]
    )


text = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=120
) | st.lists(st.sampled_from(WORDS), max_size=12).map(" ".join)


@settings(max_examples=200, deadline=None)
@given(title=text, body=text)
def test_features_equal_scikit_learn_on_any_text(title, body):
    doc = [(title, body, "")]
    assert np.allclose(_sparse_rows(doc), _reference(doc), atol=1e-12)
    # the fit's own matrix (float32) says the same for texts it never saw
    assert np.allclose(FEATURES.matrix(doc).toarray(), _reference(doc), atol=1e-6)


def _targets(kind: str) -> np.ndarray:
    if kind == "softmax":
        return np.array([i % 3 for i in range(len(DOCS))])
    if kind == "binary":
        return np.array([i % 2 for i in range(len(DOCS))])
    return np.array([[i % 2, 1 if i % 5 == 0 else 0] for i in range(len(DOCS))], dtype=float)


@pytest.mark.parametrize("kind", ["softmax", "binary", "ovr"])
def test_the_saved_head_answers_what_the_fit_answers(kind):
    x = FEATURES.matrix(DOCS)
    fitted = logistic.fit(x, _targets(kind), c=10.0, kind=kind, classes=3)
    head = LinearHead(kind, fitted.coef.astype(np.float32), fitted.intercept)
    fresh = corpus(40, seed=11)
    expected = logistic.probabilities(FEATURES.matrix(fresh), fitted, kind)
    got = head.probabilities(FEATS.rows(fresh))
    assert got.shape == expected.shape == (40, {"softmax": 3, "binary": 2, "ovr": 2}[kind])
    # coefficients kept as float32: agreement to about 1e-6
    assert np.allclose(got, expected, atol=1e-5)
    if kind != "ovr":
        assert np.allclose(got.sum(axis=1), 1.0)


def test_answering_imports_no_scikit_learn(tmp_path):
    """A saved model is loaded and answers in a process that never imports scikit-learn."""
    from datetime import UTC, datetime

    from issue_assistant.config.labels import LabelsConfig
    from issue_assistant.learn import store
    from issue_assistant.learn.model import fit
    from issue_assistant.learn.rows import Row

    labels = LabelsConfig.model_validate({"type": [{"name": "bug"}, {"name": "feature"}]})
    rows = [
        Row(i, datetime(2024, 1, 1, tzinfo=UTC).replace(minute=i % 60, hour=i // 60), t, b, lab)
        for i, ((t, b, _), lab) in enumerate(
            zip(DOCS, [frozenset({("bug", "feature")[n]}) for n in _targets("binary")], strict=True)
        )
    ]
    model = fit(rows, labels, datetime(2025, 1, 1, tzinfo=UTC))
    store.save_model(model, tmp_path, store.labels_key(labels))
    expected = model.probabilities_many([DOCS[0]])[0]["type"]["bug"]
    code = (
        "import sys\n"
        "from issue_assistant.config.labels import LabelsConfig\n"
        "from issue_assistant.learn import store\n"
        "labels = LabelsConfig.model_validate("
        "{'type': [{'name': 'bug'}, {'name': 'feature'}]})\n"
        f"m = store.load_model({str(tmp_path)!r}, store.labels_key(labels))\n"
        f"p = m.probabilities_many([{DOCS[0]!r}])[0]['type']['bug']\n"
        "print(repr(p), 'sklearn' in sys.modules or 'scipy' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    prob, imported = out.stdout.split()
    assert float(prob) == pytest.approx(expected, abs=1e-12)
    assert imported == "False"


def test_fitting_imports_no_scikit_learn_or_scipy():
    code = (
        "import sys\n"
        "from datetime import UTC, datetime, timedelta\n"
        "from issue_assistant.config.labels import LabelsConfig\n"
        "from issue_assistant.learn.model import fit\n"
        "from issue_assistant.learn.rows import Row\n"
        "labels = LabelsConfig.model_validate("
        "{'type': [{'name': 'bug'}, {'name': 'feature'}, {'name': 'docs'}]})\n"
        "t0 = datetime(2024, 1, 1, tzinfo=UTC)\n"
        "words = ['crash error', 'add option', 'docs typo']\n"
        "rows = [Row(i, t0 + timedelta(hours=i), words[i % 3] + f' {i}', words[i % 3],"
        " frozenset({['bug', 'feature', 'docs'][i % 3]})) for i in range(90)]\n"
        "m = fit(rows, labels, t0 + timedelta(days=30))\n"
        "assert m.mode('type') == 'learned', m.groups['type'].reason\n"
        "print(sorted(n for n in sys.modules if n.split('.')[0] in ('sklearn', 'scipy')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
