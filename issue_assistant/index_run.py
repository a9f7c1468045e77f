"""The Action's `index` command: the index and the label model brought up to date ahead of the
runs that post comments, so the first event of a large repository does not wait for them.

It lists what changed since the last run (a first build goes on from its resume point, within
the same rate margin as `analyze`) and fits the label model when the refit rule says so (none
saved yet, 50 labelled issues more, or the first build completed in this run). Nothing is
written to GitHub. Run it on a schedule, or once by hand after installing, with the same cache
as `analyze`. Like the sync it is, it takes the tracker on GitHub, not a moment (no issue is
analyzed; see `moment`).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime

from issue_assistant.comment import IndexProgress
from issue_assistant.config.labels import LabelsConfig
from issue_assistant.config.sections import Config
from issue_assistant.settings import current
from issue_assistant.sync import index_progress, refresh_index
from issue_assistant.tracker.base import WritableTracker

log = logging.getLogger(__name__)


@dataclass
class IndexRun:
    """What an `index` run left in the cache."""

    repository: str
    path: str
    indexed: int
    progress: IndexProgress | None  # None once the first build is complete
    model: str | None  # the label model's description; None with [labels] model = vote
    refit: bool
    fit_seconds: float
    seconds: float

    def outputs(self) -> dict:
        return {
            "repository": self.repository,
            "indexed": self.indexed,
            "building": self.progress is not None,
            "of_about": self.progress.of_about if self.progress else self.indexed,
            "label_model": self.model,
            "refit": self.refit,
            "seconds": round(self.seconds, 1),
        }


def run_index(
    tracker: WritableTracker,
    labels: LabelsConfig,
    config: Config,
    *,
    now: datetime | None = None,
    cache_dir: str | None = None,
) -> IndexRun:
    """Refresh the index under the cache root and refit the label model when it is due."""
    from issue_assistant.learn.store import refit

    start = time.perf_counter()
    now = now or datetime.now(UTC)
    cache = str(current().cache_root(config.index.cache_dir, cache_dir))
    index = refresh_index(tracker, cache, now, config.index.vectors)
    model_text, refit_now, fit_seconds = None, False, 0.0
    if config.labels.model == "learned":
        model, refit_now = refit(tracker, index, labels, now, replay=False)
        model_text, fit_seconds = model.describe(), model.fit_seconds if refit_now else 0.0
        log.info("label model %s: %s", "fit" if refit_now else "up to date", model_text)
    return IndexRun(
        repository=tracker.repository.full_name,
        path=str(index.path),
        indexed=len(index),
        progress=index_progress(index, 0),
        model=model_text,
        refit=refit_now,
        fit_seconds=fit_seconds,
        seconds=time.perf_counter() - start,
    )
