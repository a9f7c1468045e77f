"""The learned state the engines read: label models and the duplicate score's calibration.

One small protocol, `Learned`, with two implementations: `Beside` (analyze, the Action, the
backlog, MCP: the label model stored beside the index, `learn/store.py`, and `calibrate`'s
`calibration.json`) and `Buckets` (evaluate: per time bucket, fit only on what was known before
its cutoff, never the files beside the index, which have seen later issues). A run's entry makes
one and hands it down in its `Moment`; nothing is set on an engine.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from issue_assistant.config.labels import LabelsConfig
from issue_assistant.config.sections import DuplicatesConfig
from issue_assistant.index import IssueIndex
from issue_assistant.index.duplicates import SCORE_VERSION, DuplicateSettings
from issue_assistant.learn.duplicate_model import MIN_CALIBRATION_PAIRS
from issue_assistant.tracker.base import Tracker

if TYPE_CHECKING:
    from issue_assistant.learn.duplicate_model import BucketDuplicates
    from issue_assistant.learn.model import LabelModel
    from issue_assistant.learn.store import BucketSource


@dataclass(frozen=True)
class Calibrated:
    """The duplicate score's weights (None: the hand weights) and threshold (None: none was
    calibrated) for a moment; `where` says where they come from, `why` why none answers."""

    weights: dict[str, float] | None
    threshold: float | None
    where: str
    why: str


class Learned(Protocol):
    """What was learned from the repository's history, as a moment may use it."""

    def label_model(
        self,
        tracker: Tracker,
        index: IssueIndex,
        labels: LabelsConfig,
        when: datetime,
        *,
        replay: bool,
    ) -> LabelModel:
        """The label model for an issue created at `when` (it learned from nothing later when
        `replay`: the past replayed offline; a live run answers with what is known now)."""
        ...

    def duplicates(self, index: IssueIndex, when: datetime) -> Calibrated:
        """The duplicate score's calibration for an issue created at `when`."""
        ...


class Beside:
    """The label model beside the index (fit once and reused), and `calibrate`'s file."""

    def __init__(self) -> None:
        from issue_assistant.learn.store import StoreSource

        self.store = StoreSource()

    def label_model(
        self,
        tracker: Tracker,
        index: IssueIndex,
        labels: LabelsConfig,
        when: datetime,
        *,
        replay: bool,
    ) -> LabelModel:
        return self.store.model_for(tracker, index, labels, when, replay=replay)

    def duplicates(self, index: IssueIndex, when: datetime) -> Calibrated:
        from issue_assistant.learn.calibration_file import duplicate_calibration_of

        cal = duplicate_calibration_of(index.path)
        if cal is None:
            return Calibrated(
                None, None, "", "no calibration.json (run `issue-assistant calibrate`)"
            )
        stale = cal.weights is None and cal.score_version != SCORE_VERSION
        found = cal.positives_found
        if stale:
            why = (
                "calibration.json was made for an older duplicate score (run "
                "`issue-assistant calibrate` again)"
            )
        elif found < MIN_CALIBRATION_PAIRS:
            why = (
                f"this repository has {found} known duplicates with their original found, too "
                f"few to calibrate on ({MIN_CALIBRATION_PAIRS} are needed)"
            )
        else:
            why = (
                f"no threshold was calibrated on this repository's {found} known duplicates "
                f"with their original found ({MIN_CALIBRATION_PAIRS} are needed besides reports "
                "filed again, and a threshold reaching the target precision)"
            )
        where = f"calibrated on this repository's {cal.duplicates} known duplicates"
        return Calibrated(cal.weights, None if stale else cal.threshold, where, why)


class Buckets:
    """evaluate: the label model and the duplicate calibration of each issue's time bucket."""

    def __init__(self, labels: BucketSource, duplicates: BucketDuplicates) -> None:
        self.labels = labels
        self.duplicate_fits = duplicates

    def label_model(
        self,
        tracker: Tracker,
        index: IssueIndex,
        labels: LabelsConfig,
        when: datetime,
        *,
        replay: bool,
    ) -> LabelModel:
        return self.labels.model_for(tracker, index, labels, when)

    def duplicates(self, index: IssueIndex, when: datetime) -> Calibrated:
        fit = self.duplicate_fits.for_moment(when)
        where = f"calibrated on the {fit.known} known duplicates closed before this bucket's cutoff"
        return Calibrated(fit.weights, fit.threshold, where, fit.why)


def prior_settings(
    index: IssueIndex, weights: dict[str, float] | None, why: str
) -> DuplicateSettings:
    """The shared data's prior threshold, for the score with or without a dense cosine."""
    from issue_assistant.learn.duplicate_prior import load_prior

    prior = load_prior()
    dense = index.sentences is not None and len(index.sentences) > 0
    where = f"{prior.describe(dense)}: {why}"
    return DuplicateSettings(weights, prior.row(dense).threshold, "prior", where)


def duplicate_settings(
    config: DuplicatesConfig, learned: Learned, index: IssueIndex, when: datetime
) -> DuplicateSettings:
    """The score's weights (None: the hand weights) and the threshold for an issue created at
    `when`, and where they come from: `[duplicates] threshold` when config.toml sets it, else
    the threshold calibrated on this repository's known duplicates (evaluate's time bucket, or
    `calibrate`'s file), else the prior fit on the shared data."""
    cal = learned.duplicates(index, when)
    if config.threshold is not None:
        return DuplicateSettings(cal.weights, config.threshold, "config", "[duplicates] threshold")
    if cal.threshold is not None:
        return DuplicateSettings(cal.weights, cal.threshold, "calibrated", cal.where)
    return prior_settings(index, cal.weights, cal.why)
