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
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from issue_assistant.atomic import write_atomic
from issue_assistant.config.labels import GROUPS, LabelsConfig
from issue_assistant.config.sections import Config
from issue_assistant.decision import Bounds
from issue_assistant.index import IssueIndex
from issue_assistant.index.duplicates import SCORE_VERSION
from issue_assistant.learn.confidence import ThresholdTable
from issue_assistant.learn.duplicate_model import NEGATIVES, Replay
from issue_assistant.learn.model import SINGLE, LabelModel
from issue_assistant.learn.tiers import TierRule, measured
from issue_assistant.progress import counted
from issue_assistant.tracker.base import Tracker

log = logging.getLogger(__name__)

CALIBRATION_FILE = "calibration.json"
Probability = Annotated[float, Field(gt=0, le=1)]
Count = Annotated[int, Field(ge=0)]
Weight = Annotated[float, Field(allow_inf_nan=False, ge=-1e3, le=1e3)]


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
    model_config = ConfigDict(extra="forbid", strict=True)

    threshold: Probability
    proposals: Count
    correct: Count
    duplicates: Count
    negatives: Count
    false: Count


class DuplicateCalibration(BaseModel):
    """calibrate's duplicate score for this repository, validated whenever it is read: a
    threshold outside (0, 1] (-1 would make every issue a duplicate), weights without `bias`
    or with a key the score does not have, a count or type out of place are refused."""

    model_config = ConfigDict(extra="forbid", strict=True)

    target_precision: Probability
    # None: too few known duplicates to calibrate on (the prior's threshold answers)
    threshold: Probability | None
    duplicates: Count
    negatives: Count
    # "learned": weights fit on this repository's known pairs; "hand-weighted": too few of them
    model: Literal["learned", "hand-weighted"] = "hand-weighted"
    weights: dict[str, Weight] | None = None
    positives_found: Count = 0
    rows: list[DuplicateRow] = Field(default_factory=list)
    # the version of the score's features (`index/duplicates.py`): a hand-weighted threshold
    # calibrated on another version's hand weights no longer applies
    score_version: Count = 1

    @model_validator(mode="after")
    def _weights_fit_the_score(self) -> DuplicateCalibration:
        from issue_assistant.learn.duplicate_model import DENSE_KEYS

        if self.weights is not None:
            if "bias" not in self.weights:
                raise ValueError("weights without 'bias'")
            unknown = sorted(set(self.weights) - {"bias", *DENSE_KEYS})
            if unknown:
                raise ValueError(f"weights for features the score does not have: {unknown}")
        if (self.weights is not None) != (self.model == "learned"):
            raise ValueError(f"model {self.model!r} with{'' if self.weights else 'out'} weights")
        return self


class CalibrationFile(BaseModel):
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
        bounds = (
            {k: rule.bounds(c, per_label=group not in SINGLE) for k, c in table.curves.items()}
            if ok and table
            else {}
        )
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
    *,
    replay: Replay,
    again: Mapping[int, frozenset[int]],
) -> DuplicateCalibration:
    """The `similar` engine's duplicate score replayed on closed history with known originals.

    Positives: issues closed as duplicates of a known older original (right when the engine's best
    candidate is that original, or the original it is itself a duplicate of), reports their
    reporters filed again among them (`again`, `tracker.duplicates.refiled`). Negatives: a fixed
    sample of closed issues that are not known duplicates (any proposal is false). Everything is
    replayed a minute after opening. With enough known pairs the score's weights are fit too
    (`learn/duplicate_model.py`).
    """
    from issue_assistant.learn import duplicate_model as dm
    from issue_assistant.tracker.duplicates import known_duplicate

    issues = [
        i
        for i in tracker.all_issues()
        if not i.is_pull_request and i.state == "closed" and i.created_at < before
    ]
    dups = [i for i in issues if known_duplicate(i, again)]
    others = dm.negatives(issues, again, negatives)
    sample = dups + others
    replayed = [
        replay(issue) for issue in counted(sample, "calibrate: duplicates", total=len(sample))
    ]
    outcomes, weights = dm.cross_validated(replayed, learn=True)
    target = config.duplicates.target_precision
    margin = config.duplicates.margin
    table, chosen = dm.calibrated_threshold(replayed, outcomes, target, len(dups), margin)
    found = sum(1 for r in replayed if r.positives)
    return DuplicateCalibration(
        target_precision=target,
        threshold=chosen,
        score_version=SCORE_VERSION,
        duplicates=len(dups),
        negatives=len(others),
        model="learned" if weights is not None else "hand-weighted",
        weights=weights,
        positives_found=found,
        rows=[
            DuplicateRow(
                threshold=t,
                proposals=p,
                correct=c,
                duplicates=len(dups),
                negatives=len(others),
                false=f,
            )
            for t, p, c, f in table
        ],
    )


def calibration_path(directory: str | Path) -> Path:
    return Path(directory) / CALIBRATION_FILE


def write_calibration(calibration: CalibrationFile, directory: str | Path) -> Path:
    text = json.dumps(calibration.model_dump(mode="json"), indent=2, sort_keys=True) + "\n"
    return write_atomic(calibration_path(directory), text, own=True)


def _problem(exc: Exception) -> str:
    """One line saying what is wrong (the first validation error, with where)."""
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first.get("loc", ())) or "(top)"
        return f"{where}: {first.get('msg', 'invalid')}"
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def read_calibration(
    directory: str | Path, fingerprint: str | None = None
) -> CalibrationFile | None:
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
        cal = CalibrationFile.model_validate({**raw, "labels": {}, "duplicates": None})
    except (OSError, ValueError, RecursionError) as exc:
        log.warning("%s: cannot use it (%s); run calibrate again", path, _problem(exc))
        return None
    try:
        labels = CalibrationFile.model_validate(
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
