"""The label model as an artifact beside the index, and where each command gets its model.

The artifact (`label-model.npz`: numpy arrays and JSON, read without pickle or scikit-learn, see
`learn/artifact.py`) records its cutoff, the fingerprint of what it was fit on and the label set;
an artifact of another format or label set is refit, never loaded. Refit rule: when at least
`REFIT_COUNT` (50) labelled issues, or `REFIT_SHARE` (10%) more than it was fit on, were created
since its cutoff. `analyze` and the Action load the artifact and refit only under that rule (so
never on every event); `index` and `calibrate` refit by the same rule (`calibrate` always).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from issue_assistant.atomic import write_atomic_with
from issue_assistant.config import LabelsConfig
from issue_assistant.index import IssueIndex
from issue_assistant.learn import artifact
from issue_assistant.learn.fitting import Fitting
from issue_assistant.learn.model import (
    MAX_ROWS,
    LabelModel,
    Row,
    fit,
    index_vectors,
    rows_from,
    rows_from_index,
)
from issue_assistant.tracker.asof import AsOfView
from issue_assistant.tracker.base import Tracker

log = logging.getLogger(__name__)

MODEL_FILE = "label-model.npz"
OLD_FILES = ("label-model.joblib",)  # format 1 (a pickle): removed when a new model is saved
REFIT_COUNT = 50
REFIT_SHARE = 0.10


def model_path(directory: str | Path) -> Path:
    return Path(directory) / MODEL_FILE


def save_model(model: LabelModel, directory: str | Path, labels_key: str) -> Path:
    """Write atomically (a temporary file renamed into place)."""
    path = model_path(directory)
    write_atomic_with(path, lambda fh: artifact.write_to(model, labels_key, fh))
    for old in OLD_FILES:
        (path.parent / old).unlink(missing_ok=True)
    return path


def load_model(directory: str | Path, labels_key: str) -> LabelModel | None:
    """The artifact, or None when missing, unreadable, of another format or label set."""
    path = model_path(directory)
    if not path.is_file():
        return None
    try:
        meta, model = artifact.read(path)
    except Exception as exc:  # noqa: BLE001 - a broken artifact is refit, not fatal
        log.warning("%s: cannot read the label model (%s); refitting", path, exc)
        return None
    if model is None:
        log.warning(
            "%s: label model format %s, not %s; refitting",
            path,
            meta.get("format"),
            artifact.FORMAT,
        )
        return None
    if meta.get("labels_key") != labels_key:
        log.info("%s: the label set changed; refitting", path)
        return None
    return model


def labels_key(labels: LabelsConfig) -> str:
    return labels.model_dump_json(include={"type", "area", "topic", "priority"})


def needs_refit(model: LabelModel, rows: list[Row]) -> bool:
    """The refit rule over the labelled rows known now."""
    new = sum(1 for r in rows if r.created_at >= model.cutoff)
    return new >= REFIT_COUNT or new >= REFIT_SHARE * max(model.issues, 1)


def history(tracker: Tracker, index: IssueIndex, labels: LabelsConfig, before: datetime):  # noqa: ANN201
    """The labelled rows before `before`: from an as-of view when offline, else from the index."""
    if isinstance(tracker, AsOfView):
        return rows_from(tracker, labels, before)
    return rows_from_index(index, labels, before)


class StoreSource:
    """analyze and the Action: the artifact beside the index, fit once and reused.

    `moment` is the issue's creation time: the model is fit on issues created before it.
    A moment before the artifact's cutoff (replaying an old issue offline) gets a model fit in
    memory on what existed then, so no later issue can steer it.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._memo: dict[tuple[str, str, datetime], LabelModel] = {}
        self._loaded: dict[tuple[str, str], tuple[tuple[int, int], LabelModel | None]] = {}

    def _load(self, directory: Path, key: str) -> LabelModel | None:
        """`load_model`, read again only when the file changed (warm and decide both ask)."""
        path = model_path(directory)
        try:
            st = path.stat()
            stamp = (st.st_mtime_ns, st.st_size)
        except OSError:
            return None
        cached = self._loaded.get((str(path), key))
        if cached is not None and cached[0] == stamp:
            return cached[1]
        model = load_model(directory, key)
        self._loaded[(str(path), key)] = (stamp, model)
        return model

    def model_for(
        self, tracker: Tracker, index: IssueIndex, labels: LabelsConfig, moment: datetime
    ) -> LabelModel:
        key = labels_key(labels)
        with self._lock:
            model = self._load(index.path, key)
            if model is not None and model.cutoff <= moment:
                # Cheap first: a refit needs REFIT_COUNT new issues, so a small index growth
                # cannot trigger one and the rows need not be read.
                grown = len(index) - getattr(model, "indexed", 0)
                if grown < REFIT_COUNT and grown < REFIT_SHARE * max(model.issues, 1):
                    return model
                rows = history(tracker, index, labels, moment)
                if not needs_refit(model, rows):
                    return model
                return self._fit_and_save(rows, labels, moment, index, key)
            if model is None:
                rows = history(tracker, index, labels, moment)
                return self._fit_and_save(rows, labels, moment, index, key)
            memo = (str(index.path), key, moment)
            if memo not in self._memo:
                rows = history(tracker, index, labels, moment)
                self._memo[memo] = fit(rows, labels, moment, vectors=index_vectors(index))
            return self._memo[memo]

    @staticmethod
    def _fit_and_save(
        rows: list[Row], labels: LabelsConfig, moment: datetime, index: IssueIndex, key: str
    ) -> LabelModel:
        model = fit(rows, labels, moment, vectors=index_vectors(index))
        model.indexed = len(index)
        save_model(model, index.path, key)
        log.info(
            "label model: %s (%.1f s); saved in %s", model.describe(), model.fit_seconds, index.path
        )
        return model


def refit(
    tracker: Tracker, index: IssueIndex, labels: LabelsConfig, moment: datetime, force: bool = False
) -> tuple[LabelModel, bool]:
    """For `index` and `calibrate`: the artifact brought up to date (refit by the rule or forced).

    Returns the model and whether it was refit.
    """
    key = labels_key(labels)
    model = load_model(index.path, key)
    rows = history(tracker, index, labels, moment)
    if model is not None and not force and model.cutoff <= moment and not needs_refit(model, rows):
        return model, False
    return StoreSource._fit_and_save(rows, labels, moment, index, key), True


class BucketSource:
    """evaluate: one model per cutoff, reused for every issue until the next cutoff.

    The model for a moment is the one of the latest cutoff at or before it, fit on the issues
    created before that cutoff as the tracker showed them then (`AsOfView`). The buckets' fits
    share one `Fitting` (`learn/fitting.py`): each issue's text is cut into terms once, and each
    bucket's logistic regressions start from the previous fit's solutions, so a bucket costs a
    fraction of a cold fit and comes out the same (the same convex objective, to the solver's
    tolerance).

    `start` fits every bucket in one thread, one after the other in the order the issues will
    ask for them (evaluate goes newest first), while the issues of the buckets already fit are
    analysed; an issue waits only for its own bucket. The fits are always made in one order by
    one thread at a time, so a run's models do not depend on timing.
    """

    def __init__(
        self,
        tracker: Tracker,
        labels: LabelsConfig,
        cutoffs: list[datetime],
        *,
        ahead: bool = True,
    ) -> None:
        self.tracker = tracker
        self.labels = labels
        self.cutoffs = sorted(set(cutoffs))
        self._models: dict[datetime, LabelModel] = {}
        self._locks: dict[datetime, threading.Lock] = {c: threading.Lock() for c in self.cutoffs}
        self._fitting = Fitting()
        self.ahead = ahead
        self._chain: dict[datetime, threading.Event] = {}

    def cutoff_for(self, moment: datetime) -> datetime | None:
        before = [c for c in self.cutoffs if c <= moment]
        return before[-1] if before else None

    def model_for(
        self, tracker: Tracker, index: IssueIndex, labels: LabelsConfig, moment: datetime
    ) -> LabelModel:
        """`moment` is the issue's creation: the bucket's cutoff is at or before it."""
        cutoff = self.cutoff_for(moment)
        if cutoff is None:
            return fit([], labels, moment)
        fitting = self._chain.get(cutoff)
        if fitting is not None:
            fitting.wait()  # set once the chain has fit it (or given up: then it is fit here)
        return self._model_at(cutoff, index)

    def start(self, index: IssueIndex, moments: Sequence[datetime]) -> None:
        """Fit the buckets of `moments` (the issues' creations, in the order they are analysed)
        in a thread of its own, each bucket once, in the order of the first issue that needs it."""
        if not self.ahead or self._chain:
            return
        order = list(dict.fromkeys(c for m in moments if (c := self.cutoff_for(m)) is not None))
        if not order:
            return
        self._chain = {c: threading.Event() for c in order}

        def work() -> None:
            try:
                for cutoff in order:
                    self._model_at(cutoff, index)
                    self._chain[cutoff].set()
            except Exception as exc:  # noqa: BLE001 - each bucket's first issue fits it again
                log.warning("label models fit ahead: %r", exc)
            finally:
                for event in self._chain.values():
                    event.set()

        threading.Thread(target=work, name="label-models-ahead", daemon=True).start()

    def _model_at(self, cutoff: datetime, index: IssueIndex) -> LabelModel:
        with self._locks[cutoff]:
            if cutoff not in self._models:
                view = AsOfView(self.tracker, cutoff)
                rows = rows_from(view, self.labels, cutoff, newest=MAX_ROWS)
                self._models[cutoff] = fit(
                    rows, self.labels, cutoff, vectors=index_vectors(index), fitting=self._fitting
                )
            return self._models[cutoff]

    @property
    def models(self) -> list[LabelModel]:
        return [self._models[c] for c in self.cutoffs if c in self._models]


def bucket_cutoffs(created: list[datetime], size: int = 50) -> list[datetime]:
    """A cutoff at the creation of the earliest of every `size` consecutive issues (time order).

    The model of a bucket is fit on issues created strictly before its cutoff, so on none of the
    bucket's own issues.
    """
    ordered = sorted(created)
    return [ordered[i] for i in range(0, len(ordered), max(size, 1))]
