"""The title's cues of a question or a docs report (`learn/cues.py`): what they read, and what
the type model learns from them on real hf-datasets history, held out in time."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import f1_score

from issue_assistant.config.labels import load_labels
from issue_assistant.learn import features, model
from issue_assistant.learn.cues import title_cues
from issue_assistant.learn.model import fit
from issue_assistant.learn.rows import rows_from
from issue_assistant.tracker.snapshot import read_snapshot

ROOT = Path(__file__).resolve().parents[1]
HF = ROOT.parent / "shared" / "data" / "hf-datasets.jsonl.gz"
LABELS = ROOT / "bench" / "hf-datasets.labels.toml"
PLAIN = tuple(s for s in features.SPECS if s.analyzer != "cues")
needs_data = pytest.mark.skipif(not HF.exists(), reason="the shared data is not here")


@pytest.mark.parametrize(
    ("title", "cues"),
    [
        ("How do I load a local CSV file?", ["cue_ask", "cue_qmark"]),
        ("Is it possible to stream a dataset from S3", ["cue_ask"]),
        ("[Question] why does map() copy the table", ["cue_ask"]),
        ("load_dataset hangs when num_proc > 1?", ["cue_qmark"]),
        ("Fix a typo in the README", ["cue_docs"]),
        ("Missing docstring for Dataset.map", ["cue_docs"]),
        ("Better document the defaults of to_json", ["cue_docs"]),
        ("KeyError when loading the squad dataset", []),
        ("Add support for parquet output", []),
    ],
)
def test_a_title_says_its_cues(title, cues):
    assert title_cues(title) == cues


def test_a_history_without_a_cue_has_no_cue_block_and_one_with_them_has_it():
    stated = [("Crash on load", "Traceback", ""), ("Add an option", "It would be nice", "")] * 3
    feats = features.fit_features(stated)
    assert [p.spec.name for p in feats.parts] == ["title_words", "title_chars", "body_words"]
    asked = [*stated, ("How do I load a file?", "I tried", ""), ("Typo in the docs", "here", "")]
    feats = features.fit_features(asked)
    (part,) = [p for p in feats.parts if p.spec.analyzer == "cues"]
    assert part.text_part().vocabulary == {"cue_ask": 0, "cue_docs": 1, "cue_qmark": 2}
    x = feats.matrix(asked).toarray()
    cues = x[:, feats.width - 3 :]
    assert (cues[:6] == 0).all() and (cues[6] > 0).sum() == 2 and (cues[7] > 0).sum() == 1
    # the coefficients of a fit without the block carry over to one with it, by block and term
    old = features.fit_features(stated)
    coef = np.arange(old.width, dtype=float).reshape(-1, 1)
    moved = feats.carry(old, coef)
    assert moved.shape == (feats.width, 1) and (moved[feats.width - 3 :] == 0).all()


@pytest.fixture(scope="module")
def hf():
    """hf-datasets' labelled issues, oldest first, each with its one type (or None)."""
    labels = load_labels(LABELS)
    snapshot = read_snapshot(HF)
    types = set(labels.proposable("type"))
    rows = rows_from(snapshot, labels, snapshot.repository.fetched_at)
    one = [[n for n in r.labels if n in types] for r in rows]
    return labels, [(r, m[0] if len(m) == 1 else None) for r, m in zip(rows, one, strict=True)]


@pytest.fixture(scope="module")
def history(hf):
    """The 300 labelled issues before hf-datasets' newest 200 typed ones, and those 200 (the
    labels section's last setting)."""
    labels, rows = hf
    scored = [(r, t) for r, t in rows if t][-200:]
    train = [r for r, _ in rows if r.created_at < scored[0][0].created_at][-300:]
    return labels, train, scored


@pytest.fixture(scope="module")
def oldest(hf):
    """The oldest 300 labelled issues (seven questions among them) and the next 200 (the labels
    section's second setting)."""
    labels, rows = hf
    train = [r for r, _ in rows[:300]]
    return labels, train, [(r, t) for r, t in rows[300:] if t][:200]


def _fit(history, specs):  # noqa: ANN001, ANN202
    """The type model on the history with the given feature blocks (no prior, no folds: the
    cues alone are measured)."""
    labels, train, scored = history
    model.fit_features = partial(features.fit_features, specs=specs)
    try:
        return fit(train, labels, scored[0][0].created_at, calibrate=False, prior_weight=0.0)
    finally:
        model.fit_features = features.fit_features


@pytest.fixture(scope="module")
def with_cues(history):
    return _fit(history, features.SPECS)


@pytest.fixture(scope="module")
def without_cues(history):
    return _fit(history, PLAIN)


def _type(m, docs):  # noqa: ANN001, ANN202
    return [p["type"] for p in m.probabilities_many(docs)]


@needs_data
def test_the_cues_raise_the_documentation_type_on_later_issues(history, with_cues, without_cues):
    _, _, scored = history
    gold = [t for _, t in scored]
    present = sorted(set(gold))
    assert gold.count("documentation") >= 5
    docs = [r.doc for r, _ in scored]

    def scores(m):  # noqa: ANN001, ANN202
        top = [max(p, key=p.get) for p in _type(m, docs)]
        return [
            f1_score(gold, top, labels=labels, average="macro", zero_division=0)
            for labels in (present, ["documentation"], ["bug", "enhancement"])
        ]

    (all_with, docs_with, two_with), (all_without, docs_without, two_without) = (
        scores(with_cues),
        scores(without_cues),
    )
    assert docs_with >= docs_without + 0.15, (docs_without, docs_with)
    assert all_with >= all_without + 0.03, (all_without, all_with)
    assert two_with >= two_without - 0.01, (two_without, two_with)


@needs_data
def test_an_interrogative_title_raises_the_question_type(oldest):
    # Fit on the oldest 300 labelled issues; the later issues, their titles asked as questions.
    with_cues, without_cues = _fit(oldest, features.SPECS), _fit(oldest, PLAIN)
    _, _, scored = oldest
    assert "question" in with_cues.groups["type"].classes
    stated = [r.doc for r, _ in scored[:60]]
    asked = [(f"How do I avoid this: {t}?", p, f) for t, p, f in stated]

    def rise(m):  # noqa: ANN001, ANN202
        before, after = _type(m, stated), _type(m, asked)
        return sum(a["question"] / b["question"] for a, b in zip(after, before, strict=True)) / 60

    assert rise(with_cues) > 1.5 * rise(without_cues) > 1.0, (rise(without_cues), rise(with_cues))


@needs_data
def test_a_bug_with_a_traceback_titled_as_a_question_is_still_a_bug(history, with_cues):
    _, _, scored = history
    bugs = [
        (r.title.rstrip(" ?."), r.prose, r.form)
        for r, t in scored
        if t == "bug" and "codeblock" in r.prose and "Error" in r.prose
    ]
    called = [
        d for d, p in zip(bugs, _type(with_cues, bugs), strict=True) if max(p, key=p.get) == "bug"
    ]
    assert len(called) >= 10
    asked = [(f"Why does this fail: {t}?", p, f) for t, p, f in called]
    still = [max(p, key=p.get) == "bug" for p in _type(with_cues, asked)]
    assert sum(still) >= 0.9 * len(called), (sum(still), len(called))
