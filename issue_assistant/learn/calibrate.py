"""`calibrate`: label thresholds and the duplicate threshold, fit on the repository's history.

The result is `calibration.json` beside the index: what it was fit on (cutoff, counts, the data
fingerprint), the targets, each threshold, and the coverage/precision table it was chosen from.
"""

from __future__ import annotations

import json
import logging
import random
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidatorFunctionWrapHandler,
    field_validator,
    model_validator,
)

from issue_assistant.atomic import write_atomic
from issue_assistant.config import Config, LabelsConfig
from issue_assistant.index import IssueIndex
from issue_assistant.index.duplicates import SCORE_VERSION
from issue_assistant.learn.calibration import ThresholdTable
from issue_assistant.learn.duplicate_model import NEGATIVES
from issue_assistant.learn.model import LabelModel
from issue_assistant.tracker.base import Tracker

CALIBRATION_FILE = "calibration.json"
log = logging.getLogger(__name__)
Probability = Annotated[float, Field(gt=0, le=1)]
Count = Annotated[int, Field(ge=0)]
Weight = Annotated[float, Field(allow_inf_nan=False, ge=-1e3, le=1e3)]


class GroupCalibration(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: str
    reason: str = ""
    issues: int = 0
    threshold: float | None = None
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


class Calibration(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: int = 1
    repository: str
    cutoff: datetime
    fingerprint: str
    labelled_issues: int
    target_precision: float
    labels: dict[str, GroupCalibration]
    duplicates: DuplicateCalibration | None = None

    @field_validator("duplicates", mode="wrap")
    @classmethod
    def _duplicates_or_none(cls, value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        """An invalid duplicate part is logged in one line and left out (the prior answers
        until `calibrate` runs again); the label part is read on its own."""
        try:
            return handler(value)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "duplicates"
            log.warning(
                "%s: the duplicate part is invalid (%s: %s) and is ignored; run "
                "`issue-assistant calibrate` again",
                CALIBRATION_FILE,
                where,
                first["msg"],
            )
            return None


def label_calibration(model: LabelModel, target: float) -> dict[str, GroupCalibration]:
    out = {}
    for group, gm in model.groups.items():
        out[group] = GroupCalibration(
            model=gm.mode,
            reason=gm.reason,
            issues=gm.issues,
            threshold=gm.table.choose(target) if gm.table is not None else None,
            table=gm.table,
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
    from issue_assistant.evaluate.gold import closed_as_duplicate
    from issue_assistant.learn import duplicate_model as dm

    issues = [
        i
        for i in tracker.all_issues()
        if not i.is_pull_request and i.state == "closed" and i.created_at < before
    ]
    dups = [i for i in issues if i.duplicate_of is not None]
    others = [i for i in issues if i.duplicate_of is None and not closed_as_duplicate(i)]
    random.Random(7).shuffle(others)
    replayed = [
        dm.replay_issue(tracker, issue, index=index, labels=labels, config=config)
        for issue in dups + others[:negatives]
    ]
    outcomes, weights = dm.cross_validated(replayed, learn=True)
    target = config.duplicates.target_precision
    table, chosen = dm.choose_threshold(outcomes, target, len(dups), config.duplicates.margin)
    found = sum(1 for r in replayed if r.positives)
    if found < dm.MIN_CALIBRATION_PAIRS:
        chosen = None  # too few known pairs to trust a threshold: the prior answers
    n_neg = min(len(others), negatives)
    return DuplicateCalibration(
        target_precision=target,
        threshold=chosen,
        score_version=SCORE_VERSION,
        duplicates=len(dups),
        negatives=n_neg,
        model="learned" if weights is not None else "hand-weighted",
        weights=weights,
        positives_found=found,
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


def read_calibration(directory: str | Path) -> Calibration | None:
    path = calibration_path(directory)
    if not path.is_file():
        return None
    try:
        return Calibration.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def duplicate_calibration_of(directory: str | Path) -> DuplicateCalibration | None:
    """What `calibrate` fit for duplicates beside the index (threshold, weights), if anything."""
    cal = read_calibration(directory)
    return cal.duplicates if cal is not None else None
