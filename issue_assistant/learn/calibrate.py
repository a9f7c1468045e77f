"""`calibrate`: label thresholds and the duplicate threshold, fit on the repository's history.

The result is `calibration.json` beside the index: what it was fit on (cutoff, counts, the data
fingerprint), the floor and target, each group's threshold and tier bounds with the folds, curve
and coverage/precision table they come from, and the duplicate threshold.

Reading it validates each part on its own (keys, ranges, the data fingerprint): a part that does
not validate is logged in one line and ignored, never trusted and never a traceback.
"""

from __future__ import annotations

import json
import logging
import random
from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from issue_assistant.atomic import write_atomic
from issue_assistant.config import GROUPS, Config, LabelsConfig
from issue_assistant.decision import Bounds
from issue_assistant.index import IssueIndex
from issue_assistant.learn.calibration import ThresholdTable
from issue_assistant.learn.duplicate_model import NEGATIVES
from issue_assistant.learn.model import SINGLE, LabelModel
from issue_assistant.learn.tiers import TierRule, measured
from issue_assistant.tracker.base import Tracker

log = logging.getLogger(__name__)

CALIBRATION_FILE = "calibration.json"


class GroupCalibration(BaseModel):
    """One label group: how it is answered, and for a learned group its measured tiers."""

    model_config = ConfigDict(extra="forbid")

    model: Literal["learned", "vote"]
    reason: str = ""
    issues: int = Field(default=0, ge=0)
    # A single-label group's threshold: the lowest confidence reaching the floor (None: none
    # does, or not measured; a multi-label group has one per label in `bounds`).
    threshold: float | None = Field(default=None, ge=0, le=1)
    # "time-ordered", "stratified", "not measured" (too small a history), "" for the vote.
    method: str = ""
    measured: bool = False
    bounds: dict[str, Bounds] = Field(default_factory=dict)
    table: ThresholdTable | None = None


class DuplicateRow(BaseModel):
    model_config = ConfigDict(extra="forbid")

    threshold: float
    proposals: int
    correct: int
    duplicates: int
    negatives: int
    false: int


class DuplicateCalibration(BaseModel):
    model_config = ConfigDict(extra="forbid")

    target_precision: float
    threshold: float | None
    duplicates: int
    negatives: int
    # "learned": weights fit on this repository's known pairs; "hand-weighted": too few of them
    model: str = "hand-weighted"
    weights: dict[str, float] | None = None
    positives_found: int = 0
    rows: list[DuplicateRow] = Field(default_factory=list)


class Calibration(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: int = Field(default=1, ge=1, le=1)
    repository: str
    cutoff: datetime
    fingerprint: str = Field(pattern=r"^[0-9a-f]{16}$")
    labelled_issues: int = Field(ge=0)
    target_precision: float = Field(gt=0, le=1)
    min_precision: float = Field(default=0.6, ge=0, le=1)
    propose: Literal["high", "likely", "possible"] = "possible"
    labels: dict[Literal["type", "area", "topic", "priority"], GroupCalibration]
    duplicates: DuplicateCalibration | None = None


def label_calibration(model: LabelModel, rule: TierRule) -> dict[str, GroupCalibration]:
    """Per group of the model, what `calibrate` prints and writes."""
    out = {}
    for group in GROUPS:
        gm = model.groups.get(group)
        if gm is None:
            continue
        table = gm.table
        ok = gm.mode == "learned" and measured(table)
        bounds = {k: rule.bounds(c) for k, c in table.curves.items()} if ok and table else {}
        method = (table.method if ok and table else "not measured") if gm.mode == "learned" else ""
        out[group] = GroupCalibration(
            model=gm.mode,  # type: ignore[arg-type]
            reason=gm.reason,
            issues=gm.issues,
            threshold=bounds[""].possible if group in SINGLE and "" in bounds else None,
            method=method,
            measured=ok,
            bounds=bounds,
            table=table,
        )
    return out


def duplicate_calibration(
    tracker: Tracker,
    index: IssueIndex,
    labels: LabelsConfig,
    config: Config,
    before: datetime,
    negatives: int = NEGATIVES,
) -> DuplicateCalibration:
    """The `similar` engine's duplicate score replayed on closed history with known originals.

    Positives: issues closed as duplicates of a known older original (right when the engine's best
    candidate is that original, or the original it is itself a duplicate of). Negatives: a fixed
    sample of closed issues that are not known duplicates (any proposal is false). Everything is
    replayed a minute after opening. With enough known pairs the score's weights are fit too
    (`learn/duplicate_model.py`).
    """
    from issue_assistant.learn import duplicate_model as dm

    issues = [
        i
        for i in tracker.all_issues()
        if not i.is_pull_request and i.state == "closed" and i.created_at < before
    ]
    dups = [i for i in issues if i.duplicate_of is not None]
    others = [i for i in issues if i.duplicate_of is None and i.state_reason != "duplicate"]
    random.Random(7).shuffle(others)
    replayed = [
        dm.replay_issue(tracker, issue, index=index, labels=labels, config=config)
        for issue in dups + others[:negatives]
    ]
    outcomes, weights = dm.cross_validated(replayed, learn=True)
    target = config.duplicates.target_precision
    table, chosen = dm.choose_threshold(outcomes, target, len(dups), config.duplicates.margin)
    n_neg = min(len(others), negatives)
    return DuplicateCalibration(
        target_precision=target,
        threshold=chosen,
        duplicates=len(dups),
        negatives=n_neg,
        model="learned" if weights is not None else "hand-weighted",
        weights=weights,
        positives_found=sum(1 for r in replayed if r.positives),
        rows=[
            DuplicateRow(
                threshold=t,
                proposals=p,
                correct=c,
                duplicates=len(dups),
                negatives=n_neg,
                false=f,
            )
            for t, p, c, f in table
        ],
    )


def calibration_path(directory: str | Path) -> Path:
    return Path(directory) / CALIBRATION_FILE


def write_calibration(calibration: Calibration, directory: str | Path) -> Path:
    text = json.dumps(calibration.model_dump(mode="json"), indent=2, sort_keys=True) + "\n"
    return write_atomic(calibration_path(directory), text)


def _problem(exc: Exception) -> str:
    """One line saying what is wrong (the first validation error, with where)."""
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first.get("loc", ())) or "(top)"
        return f"{where}: {first.get('msg', 'invalid')}"
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def read_calibration(directory: str | Path, fingerprint: str | None = None) -> Calibration | None:
    """calibration.json beside the index, each part validated on its own.

    An unreadable file or header is None; a labels part that does not validate, or (given the
    label model's `fingerprint`) was fit on other data, is dropped (`labels` empty); so is a
    duplicates part that does not validate. Each is logged in one line.
    """
    path = calibration_path(directory)
    if not path.is_file():
        return None
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(raw, dict):
            raise ValueError("not a JSON object")
        labels_raw = raw.pop("labels", {})
        dup_raw = raw.pop("duplicates", None)
        cal = Calibration.model_validate({**raw, "labels": {}, "duplicates": None})
    except (OSError, ValueError, RecursionError) as exc:
        log.warning("%s: cannot use it (%s); run calibrate again", path, _problem(exc))
        return None
    try:
        labels = Calibration.model_validate(
            {**raw, "labels": labels_raw, "duplicates": None}
        ).labels
    except (ValueError, RecursionError) as exc:
        log.warning("%s: labels part ignored (%s)", path, _problem(exc))
        labels = {}
    if labels and fingerprint is not None and cal.fingerprint != fingerprint:
        log.warning(
            "%s: labels part ignored (fit on data %s, the label model on %s)",
            path,
            cal.fingerprint,
            fingerprint,
        )
        labels = {}
    duplicates = None
    if dup_raw is not None:
        try:
            duplicates = DuplicateCalibration.model_validate(dup_raw)
        except (ValueError, RecursionError) as exc:
            log.warning("%s: duplicates part ignored (%s)", path, _problem(exc))
    return cal.model_copy(update={"labels": labels, "duplicates": duplicates})


def duplicate_calibration_of(directory: str | Path) -> DuplicateCalibration | None:
    """What `calibrate` fit for duplicates beside the index (threshold, weights), if anything."""
    cal = read_calibration(directory)
    return cal.duplicates if cal is not None else None
