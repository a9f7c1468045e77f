"""The flow for one issue: context -> engine -> validated decision -> plan -> comment."""

from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from issue_assistant.comment import Evidence, Plan, render_comment
from issue_assistant.config import Config, LabelsConfig
from issue_assistant.context import Context
from issue_assistant.decision import Decision, validate
from issue_assistant.engines import Engine, create
from issue_assistant.errors import EngineError
from issue_assistant.index import IssueIndex
from issue_assistant.index.code import code_index_for
from issue_assistant.tracker.base import Tracker
from issue_assistant.tracker.models import Issue

log = logging.getLogger(__name__)


@dataclass
class Analysis:
    issue: Issue
    context: Context
    decision: Decision
    plan: Plan
    comment: str
    error: str | None = None


def index_path(cache_dir: str | Path, full_name: str) -> Path:
    return Path(cache_dir) / "index" / re.sub(r"[^A-Za-z0-9_.-]", "__", full_name)


def open_index(tracker: Tracker, cache_dir: str | Path) -> IssueIndex:
    """The repository's index on disk, brought up to date with the tracker."""
    index = IssueIndex(index_path(cache_dir, tracker.repository.full_name))
    written = index.update(tracker.all_issues())
    if written:
        log.info("index: %d issues added or changed (%d in all)", written, len(index))
    return index


def build_context(
    view: Tracker,
    issue: Issue,
    *,
    index: IssueIndex,
    labels: LabelsConfig,
    config: Config,
    as_of: datetime,
) -> Context:
    return Context.build(
        issue,
        tracker=view,
        index=index,
        labels=labels,
        project=config.project.description,
        as_of=as_of,
        candidates=max(config.duplicates.candidates, config.similar.neighbors),
        settings=config.context,
        code=code_index_for(config, view.repository.full_name),
        likely=config.code.likely_files,
    )


def decide(
    engine: Engine, context: Context, fallback: Engine | None = None
) -> tuple[Decision, str | None]:
    """Run the engine (timed); on failure run the fallback, or raise EngineError without one."""
    start = time.perf_counter()
    try:
        decision = engine.decide(context)
        error = None
    except EngineError as exc:
        if fallback is None or fallback.name == engine.name:
            raise
        log.warning("engine %s failed (%s); falling back to %s", engine.name, exc, fallback.name)
        decision, error = fallback.decide(context), f"{engine.name}: {exc}"
    if not decision.usage.latency_s:
        usage = decision.usage.model_copy(update={"latency_s": time.perf_counter() - start})
        decision = decision.model_copy(update={"usage": usage})
    if not decision.candidates:
        decision = decision.model_copy(
            update={"candidates": [c.issue.number for c in context.candidates]}
        )
    return decision, error


def engines_for(
    config: Config, labels: LabelsConfig, name: str | None = None
) -> tuple[Engine, Engine | None]:
    engine = create(name or config.engine.name, config, labels)
    fb = config.engine.fallback
    fallback = create(fb, config, labels) if fb and fb != engine.name else None
    return engine, fallback


def analyze(
    view: Tracker,
    issue: Issue,
    *,
    index: IssueIndex,
    labels: LabelsConfig,
    config: Config,
    engine: Engine,
    fallback: Engine | None = None,
    as_of: datetime | None = None,
) -> Analysis:
    """Analyze `issue` as it was at `as_of` (default: now) against the tracker `view`."""
    moment = as_of or issue.created_at
    context = build_context(view, issue, index=index, labels=labels, config=config, as_of=moment)
    raw, error = decide(engine, context, fallback)
    decision = validate(raw, labels, view, issue)
    evidence = [
        Evidence(
            number=c.issue.number,
            title=c.issue.title,
            state=c.issue.state,
            labels=c.issue.labels,
            score=c.score,
        )
        for c in context.candidates[:5]
    ]
    plan = Plan.from_decision(
        decision,
        repository=view.repository.full_name,
        issue=issue.number,
        reporter=issue.user.login,
        created_at=moment,
        evidence=evidence,
        labels_before=list(issue.labels),
    ).model_copy(update=context.plan_notes())
    return Analysis(issue, context, decision, plan, render_comment(plan), error)
