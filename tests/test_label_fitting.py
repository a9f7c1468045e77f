"""evaluate's buckets share their fitting work and come out as cold fits would (issue 21 item 4)."""

from __future__ import annotations

import time

import numpy as np

from issue_assistant.learn import store
from issue_assistant.learn.fitting import Fitting
from issue_assistant.learn.model import fit, rows_from
from issue_assistant.tracker.asof import AsOfView
from tests.test_learn import LABELS, snap, synthetic


def _probs(model, docs):  # noqa: ANN001, ANN202
    out = model.probabilities_many(docs)
    return np.array([[p[g][c] for g in ("type", "area") for c in sorted(p[g])] for p in out])


def test_buckets_fit_on_a_shared_fitting_answer_as_cold_fits():
    issues = synthetic(240)
    snapshot = snap(issues)
    cutoffs = [issues[k].created_at for k in (150, 180, 210)]
    docs = [(i.title, i.body or "") for i in issues[210:]]
    shared = Fitting()
    for cutoff in cutoffs:
        rows = rows_from(AsOfView(snapshot, cutoff), LABELS, cutoff)
        warm = fit(rows, LABELS, cutoff, fitting=shared)
        cold = fit(rows, LABELS, cutoff)
        assert warm.fingerprint == cold.fingerprint
        # the same optimum to the solver's tolerance (GTOL): near-identical probabilities, the
        # same answers, thresholds calibrated within a step
        p_warm, p_cold = _probs(warm, docs), _probs(cold, docs)
        assert np.abs(p_warm - p_cold).max() < 0.05
        assert ((p_warm > 0.5) == (p_cold > 0.5)).all()
        for group in ("type", "area"):
            assert warm.groups[group].c == cold.groups[group].c
            a, b = warm.groups[group].table, cold.groups[group].table
            assert a is not None and b is not None
            ta, tb = a.choose(0.9), b.choose(0.9)
            assert ta is not None and tb is not None and abs(ta - tb) <= 0.05 + 1e-9


def test_the_newest_rows_read_newest_first_are_the_tail_of_all_rows():
    issues = synthetic(200)
    view = AsOfView(snap(issues), issues[180].created_at, hide=issues[170].number)
    before = issues[175].created_at
    every = rows_from(view, LABELS, before)
    assert len(every) == 174  # 175 issues before, one hidden
    assert rows_from(view, LABELS, before, newest=50) == every[-50:]
    assert rows_from(view, LABELS, before, newest=500) == every


def test_the_next_bucket_is_fit_ahead_and_only_once(tmp_path):
    issues = synthetic(200)
    snapshot = snap(issues)
    cutoffs = store.bucket_cutoffs([i.created_at for i in issues[120:]], 40)
    source = store.BucketSource(snapshot, LABELS, cutoffs)
    first = source.model_for(snapshot, None, LABELS, issues[121].created_at)  # type: ignore[arg-type]
    assert first.cutoff == cutoffs[0]
    deadline = time.monotonic() + 120
    while len(source.models) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert [m.cutoff for m in source.models] == cutoffs[:2]  # the next one, no further
    second = source.model_for(snapshot, None, LABELS, issues[165].created_at)  # type: ignore[arg-type]
    assert second is source.models[1]  # fit ahead, not again
    rows = rows_from(AsOfView(snapshot, cutoffs[1]), LABELS, cutoffs[1])
    assert second.issues == len(rows) and second.cutoff == cutoffs[1]
    assert max(r.created_at for r in rows) < cutoffs[1]
