"""Where the label model comes from: a refit check that reads no stored issue, a refit when the
first live build completes, and a model kept (not refit every time) for an older issue."""

from __future__ import annotations

import json
import logging
from datetime import timedelta
from pathlib import Path

import pytest

from issue_assistant.cli import main
from issue_assistant.index import IssueIndex
from issue_assistant.index.local import open_index
from issue_assistant.learn import saved as saved_mod
from issue_assistant.learn import store
from issue_assistant.tracker.asof import AsOfView
from issue_assistant.tracker.base import IssuesOnly
from issue_assistant.tracker.snapshot import write_snapshot
from tests.test_learn import LABELS, snap, synthetic


class Live(IssuesOnly):
    """A tracker that is no as-of view: the store reads its rows from the index (a live run)."""

    def __init__(self, snapshot) -> None:  # noqa: ANN001
        self.snapshot = snapshot

    @property
    def repository(self):  # noqa: ANN201
        return self.snapshot.repository

    def all_issues(self):  # noqa: ANN201
        raise AssertionError("a live run never lists the tracker for the label model")


def no_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every way of reading stored issues (or fitting) fail the test."""

    def fail(*_a, **_k):  # noqa: ANN202
        raise AssertionError("the refit check read stored issues or fit a model")

    for name in ("all_stored", "issues_before", "stored", "_issue"):
        monkeypatch.setattr(IssueIndex, name, fail)
    for name in ("rows_from", "rows_from_index", "fit"):
        monkeypatch.setattr(store, name, fail)


def unlabelled(issues, start: int, n: int):  # noqa: ANN001, ANN201
    base = issues[-1].created_at
    return [
        issues[0].model_copy(
            update={"number": start + k, "labels": [], "created_at": base + timedelta(hours=k + 1)}
        )
        for k in range(n)
    ]


def test_a_warm_check_reads_no_stored_issue(tmp_path, monkeypatch):
    issues = synthetic(100)
    snapshot = snap(issues)
    index = open_index(snapshot, tmp_path)
    source = store.StoreSource()
    first = source.model_for(Live(snapshot), index, LABELS, issues[-1].created_at, replay=False)
    assert "fit now" in first.origin and store.model_path(index.path).is_file()

    # 60 records more, none labelled: the index grew past REFIT_COUNT, but no labelled issue
    # came after the cutoff. The check is counts from the index only.
    more = unlabelled(issues, 1000, 60)
    index.update(more)
    no_reads(monkeypatch)
    warm = store.StoreSource().model_for(
        Live(snapshot), index, LABELS, more[-1].created_at, replay=False
    )
    assert warm.fingerprint == first.fingerprint and warm.origin == "the saved label model"


def test_fifty_labelled_issues_after_the_cutoff_refit(tmp_path):
    issues = synthetic(160)
    snapshot = snap(issues)
    index = open_index(snapshot, tmp_path)
    index_only = IssueIndex(index.path)
    cutoff = issues[99].created_at
    source = store.StoreSource()
    first = source.model_for(Live(snapshot), index_only, LABELS, cutoff, replay=False)
    assert first.issues == 99
    # 9 labelled issues created since the cutoff: under 10% of 99, kept; the 10th makes it due
    kept = source.model_for(
        Live(snapshot), index_only, LABELS, issues[108].created_at, replay=False
    )
    assert kept.fingerprint == first.fingerprint
    later = source.model_for(
        Live(snapshot), index_only, LABELS, issues[109].created_at, replay=False
    )
    assert later.issues == 109 and "refit: 10 labelled issues were created" in later.origin


def test_the_first_live_build_refits_when_it_completes(tmp_path, monkeypatch):
    issues = synthetic(200)
    snapshot = snap(issues)
    index = IssueIndex(tmp_path / "index")
    index.update(issues[150:])  # run 1 of a first build: the most recently updated part
    index.mark_building(True)
    now = issues[-1].created_at + timedelta(hours=1)
    first = store.StoreSource().model_for(Live(snapshot), index, LABELS, now, replay=False)
    assert first.issues == 50

    index.update(issues[:150])  # run 2 lists the older part; the build goes on
    kept = store.StoreSource().model_for(Live(snapshot), index, LABELS, now, replay=False)
    assert kept.fingerprint == first.fingerprint  # not refit in the middle of the build

    index.mark_building(False)  # the listing completed in this run
    assert IssueIndex(index.path).building is False
    done = store.StoreSource().model_for(
        Live(snapshot), IssueIndex(index.path), LABELS, now, replay=False
    )
    assert done.issues == 200
    assert "the index now holds 150 more labelled issues from before its cutoff" in done.origin


def test_an_older_issue_gets_a_model_kept_for_its_moment(tmp_path, monkeypatch, caplog):
    issues = synthetic(160) + unlabelled(synthetic(160), 500, 5)
    snapshot = snap(issues)
    index = open_index(snapshot, tmp_path)
    fetched = snapshot.repository.fetched_at
    # what `index --labels` does: the cutoff is the snapshot's fetch time
    model, refit = store.refit(AsOfView(snapshot, fetched), index, LABELS, fetched, replay=True)
    assert refit and model.cutoff == fetched

    # An unlabelled issue newer than every labelled one: the saved model learned nothing
    # created after it, so it answers.
    late = issues[-2]
    source = store.StoreSource()
    answer = source.model_for(
        AsOfView(snapshot, late.created_at), index, LABELS, late.created_at, replay=True
    )
    assert answer.fingerprint == model.fingerprint and "none of the issues" in answer.origin

    # An old issue: fit once for its moment and kept, not refit on the next run.
    old = issues[120].created_at
    with caplog.at_level(logging.INFO, logger="issue_assistant.learn.store"):
        fitted = source.model_for(AsOfView(snapshot, old), index, LABELS, old, replay=True)
    assert fitted.cutoff == old and "kept for earlier moments" in fitted.origin
    assert "label model: fitting on 120 labelled issues" in caplog.text
    assert len(list((index.path / saved_mod.CACHE_DIR).glob("*.npz"))) == 1
    no_reads(monkeypatch)
    again = store.StoreSource().model_for(AsOfView(snapshot, old), index, LABELS, old, replay=True)
    assert again.fingerprint == fitted.fingerprint
    assert again.origin.startswith("a label model kept for an earlier moment")
    # a moment a few labelled issues later is close enough for it too
    near = issues[124].created_at
    close = store.StoreSource().model_for(
        AsOfView(snapshot, near), index, LABELS, near, replay=True
    )
    assert close.fingerprint == fitted.fingerprint
    monkeypatch.undo()

    # The cache keeps a few models, the least recently used dropped.
    for k in range(saved_mod.CACHED + 1):
        moment = issues[10 + 20 * k].created_at
        store.StoreSource().model_for(
            AsOfView(snapshot, moment), index, LABELS, moment, replay=True
        )
    kept = list((index.path / saved_mod.CACHE_DIR).glob("*.npz"))
    assert len(kept) == saved_mod.CACHED
    assert store.model_path(index.path).is_file()  # the main model stays


def test_index_labels_then_analyze_fits_once_and_says_which(tmp_path, capsys):
    issues = synthetic(140)
    path = tmp_path / "s.jsonl"
    write_snapshot(path, snap(issues).repository, issues)
    labels = tmp_path / "labels.toml"
    labels.write_text(
        '[[type]]\nname = "bug"\n[[type]]\nname = "enhancement"\n'
        '[[area]]\nname = "cli"\n[[area]]\nname = "docs"\n'
    )
    common = ["--snapshot", str(path), "--labels", str(labels), "--cache-dir", str(tmp_path / "c")]
    assert main(["index", *common]) == 0
    assert "label model refit" in capsys.readouterr().out

    def analyze() -> str:
        assert main(["analyze", *common, "--issue", "100", "--json"]) == 0
        return json.loads(capsys.readouterr().out)["calibration"]

    first, second = analyze(), analyze()
    assert "a label model fit now (this issue is older than the saved model's cutoff" in first
    assert "a label model kept for an earlier moment" in second


def test_a_long_fit_says_it_is_still_fitting(tmp_path, monkeypatch, caplog, capsys):
    monkeypatch.setattr(store, "HEARTBEAT_S", 0.01)
    real_fit = store.fit

    def slow_fit(*args, **kwargs):  # noqa: ANN202
        import time

        time.sleep(0.1)
        return real_fit(*args, **kwargs)

    monkeypatch.setattr(store, "fit", slow_fit)
    issues = synthetic(40)
    snapshot = snap(issues)
    index = open_index(snapshot, tmp_path)
    with caplog.at_level(logging.INFO, logger="issue_assistant.learn.store"):
        store.refit(
            AsOfView(snapshot, issues[-1].created_at),
            index,
            LABELS,
            issues[-1].created_at,
            replay=True,
        )
    assert "label model: still fitting, 0:00 so far" in capsys.readouterr().err
    assert "issue-assistant calibrate" in caplog.text


def test_an_index_made_before_label_names_were_kept_counts_them(tmp_path):
    issues = synthetic(30)
    index = open_index(snap(issues), tmp_path)
    meta = Path(index.path) / "issue-assistant-meta.json"
    data = json.loads(meta.read_text())
    data.pop("label_names")
    meta.write_text(json.dumps(data))
    old = IssueIndex(index.path)
    assert old.count_labelled(["BUG"]) == 15  # any casing; read once from the documents
    assert "label_names" in json.loads(meta.read_text())
    assert old.count_labelled(["cli"], before=issues[9].created_at) == 3  # #3, #6, #9 < #10
