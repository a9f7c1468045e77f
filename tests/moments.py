"""The repository at a moment and an issue's context, built as an entry builds them."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from issue_assistant.config.labels import LabelsConfig
from issue_assistant.config.sections import Config
from issue_assistant.context import Context
from issue_assistant.context_build import build_context
from issue_assistant.index import IssueIndex
from issue_assistant.learn.duplicate_model import Replayed
from issue_assistant.learn.learned import Beside, Learned
from issue_assistant.moment import Moment, open_moment
from issue_assistant.pipeline import replay_pairs
from issue_assistant.tracker.base import Tracker, WritableTracker
from issue_assistant.tracker.duplicates import refiled
from issue_assistant.tracker.models import Issue


def moment_of(
    view: Tracker,
    index: IssueIndex,
    labels: LabelsConfig,
    config: Config | None = None,
    learned: Learned | None = None,
    live: WritableTracker | None = None,
) -> Moment:
    """The moment `view` shows (a point-in-time view's moment, else now), with what `config`
    names (the code index, the fixes) and the label model beside the index; `live`: the tracker
    on GitHub, as a live run's moment holds it."""
    at = view.point_in_time
    as_of = at.moment if at is not None else None
    learned = learned or Beside()
    return open_moment(view, index, labels, config or Config(), learned, as_of=as_of, live=live)


def context_of(
    view: Tracker,
    index: IssueIndex,
    labels: LabelsConfig,
    config: Config | None = None,
    issue: Issue | None = None,
) -> Context:
    """The context of `issue` (default: the view's hidden issue) at the moment `view` shows."""
    config = config or Config()
    at = moment_of(view, index, labels, config)
    if issue is None:
        issue = view.target()  # type: ignore[attr-defined] - an AsOfView's hidden issue
    return build_context(at, issue, config)


def replayer(
    tracker: Tracker, index: IssueIndex, labels: LabelsConfig, config: Config | None = None
) -> Callable[[Issue], Replayed]:
    """What evaluate and `calibrate` replay an issue's pair features with: `replay_pairs` on
    the repository as it is, its indexes built once."""
    config = config or Config()
    base = moment_of(tracker, index, labels, config)
    again = refiled(tracker.all_issues())

    def replay(issue: Issue) -> Replayed:
        return replay_pairs(base, issue, config=config, again=again)

    return replay


def settings_context(folder: Path) -> Any:
    """A context reduced to what the duplicate settings read: the index's folder (without
    vectors), the issue's time, and the learned state beside the index."""
    index = SimpleNamespace(path=folder, vectors=None, sentences=None)
    issue = SimpleNamespace(created_at=datetime(2024, 1, 1, tzinfo=UTC))
    return SimpleNamespace(index=index, issue=issue, moment=SimpleNamespace(learned=Beside()))
