"""With `[index] embeddings = true` the label model reads the stored sentence embeddings too."""

from __future__ import annotations

from datetime import timedelta

import numpy as np

from issue_assistant.config.sections import Config
from issue_assistant.engines import create
from issue_assistant.index.local import open_index
from issue_assistant.learn import store
from issue_assistant.learn.model import fit
from issue_assistant.learn.rows import rows_from
from issue_assistant.pipeline import analyze
from issue_assistant.tracker.asof import AsOfView
from tests.moments import moment_of
from tests.test_learn import LABELS, T0, snap, synthetic

DIM = 384


def _vectors(issues, signal: float):  # noqa: ANN001, ANN202
    """A unit vector per issue: noise, plus `signal` along one axis for bugs."""
    rnd = np.random.default_rng(5)
    out = {}
    for i in issues:
        v = rnd.normal(size=DIM)
        v[0] += signal * (1 if "bug" in i.labels else -1)
        out[i.number] = (v / np.linalg.norm(v)).astype(np.float32)
    return out


def test_the_embeddings_are_one_block_of_the_same_model(tmp_path):
    issues = synthetic(120)
    # the words no longer tell the types apart; the vectors do
    issues = [i.model_copy(update={"title": f"issue {i.number}", "body": "text"}) for i in issues]
    vec = _vectors(issues, signal=20.0)
    cutoff = T0 + timedelta(days=30)
    rows = rows_from(snap(issues), LABELS, cutoff)
    # without the type prior (`learn/type_prior.py`): the words alone, as the vectors alone
    plain = fit(rows, LABELS, cutoff, calibrate=False, prior_weight=0.0)
    both = fit(rows, LABELS, cutoff, calibrate=False, vectors=vec.get, prior_weight=0.0)
    gm = both.groups["type"]
    assert gm.dense is not None and gm.dense.coef.shape == (DIM, 1)  # binary: one output
    assert gm.dense_mean is not None and gm.dense_mean.shape == (DIM,)
    assert "with their embeddings" in gm.reason and both.uses_embeddings
    assert plain.groups["type"].dense is None and not plain.uses_embeddings

    bug = next(i for i in issues if "bug" in i.labels)
    feature = next(i for i in issues if "enhancement" in i.labels)
    p_bug = both.probabilities(bug, vec[bug.number])["type"]["bug"]
    p_feature = both.probabilities(feature, vec[feature.number])["type"]["bug"]
    assert p_bug > 0.8 > 0.2 > p_feature  # the vector decides
    # without a vector the mean one stands in: the TF-IDF side alone, near the prior
    alone = both.probabilities(bug)["type"]["bug"]
    assert 0.2 < alone < 0.8

    # saved and loaded: the same answers, with and without a vector
    store.save_model(both, tmp_path, store.labels_key(LABELS))
    loaded = store.load_model(tmp_path, store.labels_key(LABELS))
    assert loaded is not None and loaded.uses_embeddings
    assert loaded.probabilities(bug, vec[bug.number]) == both.probabilities(bug, vec[bug.number])
    assert loaded.probabilities(bug) == both.probabilities(bug)


def test_a_row_without_a_vector_leaves_the_embeddings_out(tmp_path):
    issues = synthetic(80)
    vec = _vectors(issues, signal=5.0)
    vec.pop(issues[3].number)
    cutoff = T0 + timedelta(days=30)
    model = fit(rows_from(snap(issues), LABELS, cutoff), LABELS, cutoff, vectors=vec.get)
    assert model.mode("type") == "learned" and not model.uses_embeddings


def test_analyze_with_embeddings_on_fits_and_uses_them(tmp_path):
    issues = synthetic(70)
    snapshot = snap(issues)
    index = open_index(snapshot, tmp_path, vectors="sentences")  # the real MiniLM model
    assert index.vectors is not None and len(index.vectors) == 70
    config = Config.model_validate({"index": {"embeddings": True}})
    view = AsOfView.for_issue(snapshot, 65)
    decision = analyze(
        moment_of(view, index, LABELS, config),
        view.target(),
        config=config,
        engine=create("similar", config, LABELS),
    ).decision
    assert decision.label_model["type"] == "learned"
    assert "TF-IDF and sentence embeddings" in decision.calibration
    saved = store.load_model(index.path, store.labels_key(LABELS))
    assert saved is not None and saved.groups["type"].dense is not None
