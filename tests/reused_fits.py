"""Fits that `evaluate` makes on every run, made once per test module and reused read-only.

An `evaluate` run fits a label model per time bucket (`learn.store.BucketSource`) and replays
the known duplicates for the duplicate weights (`learn.duplicate_model.BucketDuplicates`), the
same work on every run over one snapshot. A module whose tests run `evaluate` many times over
one snapshot (resume, shards, merge) reuses them: a fit is kept under everything it depends on
(the snapshot's content, the labels, the configuration, the bucket's cutoff), so a run with other
inputs fits for itself, as it would without this. Fits are deterministic (one order, one thread),
so a reused one is the one the run would have made.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

import pytest

from issue_assistant.learn.duplicate_model import BucketDuplicates
from issue_assistant.learn.store import BucketSource


def _snapshot_key(tracker: Any) -> str:
    """The tracker's issues, by number, state and last update (what a fit can see)."""
    digest = hashlib.sha256(tracker.repository.full_name.encode())
    for issue in tracker.all_issues():
        digest.update(f"{issue.number}:{issue.state}:{issue.updated_at}:{issue.labels}".encode())
    return digest.hexdigest()


def _key(owner: Any, *parts: Any) -> tuple:
    cached = owner.__dict__.get("_reused_fits_key")
    if cached is None:
        cached = (_snapshot_key(owner.tracker), owner.labels.model_dump_json())
        if hasattr(owner, "config"):
            cached += (owner.config.model_dump_json(),)
        owner.__dict__["_reused_fits_key"] = cached
    return (*cached, *parts)


@pytest.fixture(scope="module")
def reused_fits() -> Iterator[dict[tuple, Any]]:
    """Label models and duplicate replays kept across the module's `evaluate` runs."""
    kept: dict[tuple, Any] = {}
    model_at, replay = BucketSource._model_at, BucketDuplicates._replay

    def kept_model_at(self: BucketSource, cutoff, index):  # noqa: ANN001, ANN202
        key = _key(self, "label-model", cutoff, str(index.path))
        if key not in kept:
            kept[key] = model_at(self, cutoff, index)
        self._models[cutoff] = kept[key]
        return kept[key]

    def kept_replay(self: BucketDuplicates, issue):  # noqa: ANN001, ANN202
        key = _key(self, "replay", issue.number, str(self.index.path))
        if key not in kept:
            kept[key] = replay(self, issue)
        return kept[key]

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(BucketSource, "_model_at", kept_model_at)
        mp.setattr(BucketDuplicates, "_replay", kept_replay)
        yield kept
