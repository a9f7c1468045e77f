"""`calibrate`: label thresholds and the duplicate threshold, fit on the repository's history.

The result is `calibration.json` beside the index: what it was fit on (cutoff, counts, the data
fingerprint), the targets, each threshold, and the coverage/precision table it was chosen from.
"""

from __future__ import annotations

import json
import random
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from issue_assistant.atomic import write_atomic
from issue_assistant.config import Config, LabelsConfig
from issue_assistant.index import IssueIndex
from issue_assistant.learn.calibration import ThresholdTable
from issue_assistant.learn.duplicate_model import NEGATIVES
from issue_assistant.learn.model import LabelModel
from issue_assistant.tracker.base import Tracker

CALIBRATION_FILE = "calibration.json"


class GroupCalibration(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: str
    reason: str = ""
    issues: int = 0
    threshold: float | None = None
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

    version: int = 1
    repository: str
    cutoff: datetime
    fingerprint: str
    labelled_issues: int
    target_precision: float
    labels: dict[str, GroupCalibration]
    duplicates: DuplicateCalibration | None = None


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
