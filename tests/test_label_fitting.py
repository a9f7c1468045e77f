"""evaluate's buckets share their fitting work and come out as cold fits would (issue 21 item 4)."""

from __future__ import annotations

import time

import numpy as np

from issue_assistant.learn import store
from issue_assistant.learn.fitting import Fitting
from issue_assistant.learn.model import fit
from issue_assistant.learn.rows import rows_from
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


def test_started_buckets_are_fit_ahead_in_the_order_asked_once_and_as_in_one_thread(monkeypatch):
    issues = synthetic(200)
    snapshot = snap(issues)
    cutoffs = store.bucket_cutoffs([i.created_at for i in issues[120:]], 40)
    # evaluate's order: newest issues first, so the newest bucket is needed first
    moments = [i.created_at for i in reversed(issues[120:])]
    source = store.BucketSource(snapshot, LABELS, cutoffs)
    fitted: list = []
    real = store.fit

    def recording(rows, labels, cutoff, **kw):  # noqa: ANN001, ANN003, ANN202
        fitted.append(cutoff)
        return real(rows, labels, cutoff, **kw)

    monkeypatch.setattr(store, "fit", recording)
    source.start(None, moments)  # type: ignore[arg-type]
    newest = source.model_for(snapshot, None, LABELS, moments[0])  # type: ignore[arg-type]
    assert newest.cutoff == cutoffs[-1]
    deadline = time.monotonic() + 120
    while len(source.models) < len(cutoffs) and time.monotonic() < deadline:
        time.sleep(0.2)
    oldest = source.model_for(snapshot, None, LABELS, moments[-1])  # type: ignore[arg-type]
    monkeypatch.undo()
    assert fitted == cutoffs[::-1]  # each bucket once, newest first, none by the caller
    assert oldest is source.models[0] and oldest.cutoff == cutoffs[0]
    # the same models as one thread fitting the buckets in that order on one Fitting
    shared = Fitting()
    docs = [(i.title, i.body or "") for i in issues[120:]]
    for model in reversed(source.models):
        cutoff = model.cutoff
        rows = rows_from(AsOfView(snapshot, cutoff), LABELS, cutoff)
        again = fit(rows, LABELS, cutoff, fitting=shared)
        assert again.issues == model.issues and max(r.created_at for r in rows) < cutoff
        assert np.array_equal(_probs(again, docs), _probs(model, docs))


def test_the_type_priors_evidence_is_kept_per_text_and_the_same_as_read_afresh(monkeypatch):
    """The folds and evaluate's buckets score the same issues again: the prior's evidence of a
    text is read once, and is what the prior says of it whatever texts come beside it."""
    from uuid import uuid4

    from issue_assistant.learn import type_prior

    run = uuid4().hex  # texts no earlier test read
    docs = [(f"{i.title} {run}", i.body or "") for i in synthetic(40)]
    docs.append((f"Crash when installing {run}", "Traceback: KeyError in the resolver"))
    fresh = type_prior.load_prior().evidence(docs)
    assert type_prior.load_prior().known_evidence(docs[:7]) == fresh[:7]
    calls = []
    real = type_prior.TypePrior.evidence

    def counted(self, texts):  # noqa: ANN001, ANN202
        calls.append(list(texts))
        return real(self, texts)

    monkeypatch.setattr(type_prior.TypePrior, "evidence", counted)
    assert type_prior.load_prior().known_evidence(list(reversed(docs))) == list(reversed(fresh))
    assert calls == [list(reversed(docs[7:]))]  # only the texts not read before
