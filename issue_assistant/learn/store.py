"""The label model as an artifact beside the index, and where each command gets its model.

The artifact (`label-model.npz`: numpy arrays and JSON, read without pickle or scikit-learn, see
`learn/artifact.py`) records its cutoff, the fingerprint of what it was fit on and the label set;
an artifact of another format or label set is refit, never loaded. Beside it, `label-model.json`
keeps what the refit rule needs (`learn/saved.py`), checked with counts from the index, so a warm
run reads no stored issue. `analyze` and the Action load the artifact and refit only under that
rule (so never on every event); `index` and `calibrate` refit by the same rule (`calibrate`
always), so a scheduled `index` (the Action's command) or `calibrate` fits ahead of the runs
that post comments.

An issue older than the artifact's cutoff (replaying it offline) gets a model that learned from
nothing created after it: the artifact itself when none of its issues is that recent, else one
of the models kept for earlier moments (`label-models/`, a few, least recently used dropped),
else one fit now and kept there. The decision says which (`LabelModel.origin`).
"""

from __future__ import annotations

import contextlib
import copy
import logging
import threading
from collections.abc import Iterator, Sequence
from datetime import datetime
from pathlib import Path

from issue_assistant.atomic import write_atomic_with
from issue_assistant.config.labels import LabelsConfig
from issue_assistant.index import IssueIndex
from issue_assistant.learn import artifact
from issue_assistant.learn.fitting import Fitting
from issue_assistant.learn.model import MAX_ROWS, LabelModel, fit
from issue_assistant.learn.rows import Row, index_vectors, rows_from, rows_from_index
from issue_assistant.learn.saved import (
    Saved,
    cache_path,
    cached,
    describe_cutoff,
    stale,
    trim_cache,
)
from issue_assistant.progress import working
from issue_assistant.tracker.asof import AsOfView
from issue_assistant.tracker.base import Tracker

log = logging.getLogger(__name__)

MODEL_FILE = "label-model.npz"
OLD_FILES = ("label-model.joblib",)  # format 1 (a pickle): removed when a new model is saved
HEARTBEAT_S: float | None = None  # a long fit says it is still fitting this often (None: 10 s)
ANSWERS_KEPT = 4  # answers remembered for the moments last asked about


def model_path(directory: str | Path) -> Path:
    return Path(directory) / MODEL_FILE


def _write(model: LabelModel, path: Path, labels_key: str) -> Path:
    return write_atomic_with(path, lambda fh: artifact.write_to(model, labels_key, fh), own=True)


def save_model(model: LabelModel, directory: str | Path, labels_key: str) -> Path:
    """Write atomically (a temporary file renamed into place)."""
    path = _write(model, model_path(directory), labels_key)
    for old in OLD_FILES:
        (path.parent / old).unlink(missing_ok=True)
    return path


def _read(path: Path, labels_key: str) -> LabelModel | None:
    """The artifact at `path`, or None when missing, unreadable, of another format or label set."""
    if not path.is_file():
        return None
    try:
        meta, model = artifact.read(path)
    except Exception as exc:  # noqa: BLE001 - a broken artifact is refit, not fatal
        log.warning("%s: cannot read the label model (%s); refitting", path, exc)
        return None
    if model is None:
        # An upgrade, not a fault: the saved model was made by another version of the tool.
        log.info(
            "%s: the label model was saved by another version of issue-assistant; fitting it again",
            path,
        )
        return None
    if meta.get("labels_key") != labels_key:
        log.info("%s: the label set changed; refitting", path)
        return None
    return model


def load_model(directory: str | Path, labels_key: str) -> LabelModel | None:
    """The artifact, or None when missing, unreadable, of another format or label set."""
    return _read(model_path(directory), labels_key)


def labels_key(labels: LabelsConfig) -> str:
    return labels.model_dump_json(include={"type", "area", "topic", "priority"})


def history(  # noqa: ANN201
    tracker: Tracker, index: IssueIndex, labels: LabelsConfig, before: datetime, *, replay: bool
):
    """The labelled rows before `before`: from the as-of view `tracker` when the past is
    replayed offline (`replay`), else from the index."""
    if replay:
        return rows_from(tracker, labels, before)
    return rows_from_index(index, labels, before)


def bookkeeping(model: LabelModel, path: Path, key: str) -> Saved:
    """The saved model's bookkeeping; for an artifact saved before it was kept, what the model
    itself records (the issues it was fit on stand for the index's count at the fit)."""
    saved = Saved.load(path)
    if saved is not None and saved.fingerprint == model.fingerprint:
        return saved
    return Saved(path, model.fingerprint, key, model.cutoff, model.issues, None, model.issues)


@contextlib.contextmanager
def fitting(rows: int, moment: datetime, why: str) -> Iterator[None]:
    """Log a fit's start, a line every `HEARTBEAT_S` while it runs, and its end."""
    log.info(
        "label model: fitting on %d labelled issues created before %s (%s); on a large history "
        "this takes minutes (a line every 10 s says it is still fitting), which the Action's "
        "`index` command or `issue-assistant calibrate`, run on a schedule, can spend ahead of "
        "the runs that post comments",
        rows,
        describe_cutoff(moment),
        why,
    )
    with working("label model", "still fitting", every=HEARTBEAT_S):
        yield


def fit_and_save(
    rows: list[Row],
    labels: LabelsConfig,
    moment: datetime,
    index: IssueIndex,
    key: str,
    *,
    why: str,
    main: bool = True,
) -> tuple[LabelModel, Saved]:
    """Fit on `rows` (created before `moment`) and save: as the artifact beside the index
    (`main`; the artifact it replaces is kept for earlier moments), or among the earlier ones."""
    with fitting(len(rows), moment, why):
        model = fit(rows, labels, moment, vectors=index_vectors(index))
    model.indexed = len(index)
    newest = max((r.created_at for r in rows if r.created_at < moment), default=None)
    before = index.count_labelled(labels.all_names(), before=moment)
    path = model_path(index.path) if main else cache_path(index.path, moment)
    saved = Saved(path, model.fingerprint, key, moment, model.issues, newest, before, len(index))
    if main:
        _retire(index.path, key)
        save_model(model, index.path, key)
    else:
        _write(model, path, key)
    saved.save()
    trim_cache(index.path)
    where = "beside the index" if main else "among the models kept for earlier moments"
    log.info(
        "label model: %s (%.1f s); saved %s in %s",
        model.describe(),
        model.fit_seconds,
        where,
        index.path,
    )
    return model, saved


def _retire(directory: Path, key: str) -> None:
    """Move the artifact about to be replaced among the models kept for earlier moments."""
    path = model_path(directory)
    old = Saved.load(path)
    if old is None or old.labels_key != key or not path.is_file():
        return
    target = cache_path(directory, old.cutoff)
    target.parent.mkdir(parents=True, exist_ok=True)
    path.replace(target)
    old.path = target
    old.save()
    model_path(directory).with_suffix(".json").unlink(missing_ok=True)


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


class StoreSource:
    """analyze and the Action: the artifact beside the index, fit once and reused.

    `moment` is the issue's creation time: the model answering learned only from issues created
    before it (see the module's docstring for an issue older than the artifact's cutoff).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loaded: dict[tuple[str, str], tuple[tuple[int, int], LabelModel | None]] = {}
        # The answer for a moment, kept for the run (warm and decide both ask): its origin stays
        # the one that first answered ("fit now", not "kept" on the second ask).
        self._answered: dict[tuple[str, str, datetime], tuple[object, LabelModel]] = {}

    def _load(self, path: Path, key: str) -> LabelModel | None:
        """`_read`, read again only when the file changed (warm and decide both ask)."""
        stamp = _stamp(path)
        if stamp is None:
            return None
        cached_model = self._loaded.get((str(path), key))
        if cached_model is not None and cached_model[0] == stamp:
            return cached_model[1]
        model = _read(path, key)
        self._loaded[(str(path), key)] = (stamp, model)
        return model

    def model_for(
        self,
        tracker: Tracker,
        index: IssueIndex,
        labels: LabelsConfig,
        moment: datetime,
        *,
        replay: bool,
    ) -> LabelModel:
        """`replay`: the past replayed offline (a live run answers with what is known now)."""
        key = labels_key(labels)
        with self._lock:
            memo = (str(index.path), key, moment)
            answered = self._answered.get(memo)
            if answered is not None and answered[0] == self._state(index):
                return answered[1]
            model = self._model_for(tracker, index, labels, moment, key, replay)
            self._answered[memo] = (self._state(index), model)
            while len(self._answered) > ANSWERS_KEPT:  # a long-lived process (`mcp`) asks often
                self._answered.pop(next(iter(self._answered)))
            return model

    @staticmethod
    def _state(index: IssueIndex) -> object:
        return _stamp(model_path(index.path)), len(index), index.building

    def _model_for(
        self,
        tracker: Tracker,
        index: IssueIndex,
        labels: LabelsConfig,
        moment: datetime,
        key: str,
        replay: bool,
    ) -> LabelModel:
        main = self._load(model_path(index.path), key)
        saved_main = bookkeeping(main, model_path(index.path), key) if main else None
        why = "no label model saved for this label set yet"
        if saved_main is not None and saved_main.cutoff <= moment:
            reason = stale(index, labels, saved_main, moment)
            if reason is None:
                return self._answer(main, "the saved label model")  # type: ignore[arg-type]
            why = f"refit: {reason}"
        elif saved_main is not None:
            if not replay:
                return self._answer(
                    main,  # type: ignore[arg-type]
                    "the saved label model (a live run answers with what is known now)",
                )
            if saved_main.newest is not None and saved_main.newest < moment:
                return self._answer(
                    main,  # type: ignore[arg-type]
                    "the saved label model: none of the issues it learned from was created "
                    "after this one",
                )
            found = self._earlier(index, labels, key, moment)
            if found is not None:
                return found
            why = (
                "this issue is older than the saved model's cutoff "
                f"({describe_cutoff(saved_main.cutoff)})"
            )
        as_main = saved_main is None or saved_main.cutoff <= moment
        rows = history(tracker, index, labels, moment, replay=replay)
        model, _ = fit_and_save(rows, labels, moment, index, key, why=why, main=as_main)
        kept = "saved" if as_main else "kept for earlier moments"
        return self._answer(model, f"a label model fit now ({why}) and {kept}")

    def _earlier(
        self, index: IssueIndex, labels: LabelsConfig, key: str, moment: datetime
    ) -> LabelModel | None:
        """A model kept for an earlier moment that may answer for `moment`, or None."""
        for saved in sorted(cached(index.path, key), key=lambda s: s.cutoff, reverse=True):
            if saved.cutoff <= moment:
                usable = stale(index, labels, saved, moment) is None
            else:
                usable = saved.newest is not None and saved.newest < moment
            model = self._load(saved.path, key) if usable else None
            if model is not None and model.fingerprint == saved.fingerprint:
                saved.touch()
                return self._answer(
                    model,
                    f"a label model kept for an earlier moment ({describe_cutoff(saved.cutoff)})",
                )
        return None

    @staticmethod
    def _answer(model: LabelModel, origin: str) -> LabelModel:
        """`model` (a shallow copy, the arrays shared) saying where it came from."""
        answer = copy.copy(model)
        answer.origin = origin
        return answer


def refit(
    tracker: Tracker,
    index: IssueIndex,
    labels: LabelsConfig,
    moment: datetime,
    force: bool = False,
    *,
    replay: bool,
) -> tuple[LabelModel, bool]:
    """For `index` and `calibrate`: the artifact brought up to date (refit by the rule or forced);
    `replay`: `tracker` is the past as of `moment`, replayed offline (else the index answers).

    Returns the model and whether it was refit.
    """
    key = labels_key(labels)
    model = load_model(index.path, key)
    why = "asked for" if force else "no label model saved for this label set yet"
    if model is not None and not force:
        saved = bookkeeping(model, model_path(index.path), key)
        reason = (
            stale(index, labels, saved, moment)
            if saved.cutoff <= moment
            else "its cutoff is later than this moment"
        )
        if reason is None:
            return model, False
        why = f"refit: {reason}"
    rows = history(tracker, index, labels, moment, replay=replay)
    return fit_and_save(rows, labels, moment, index, key, why=why)[0], True


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
