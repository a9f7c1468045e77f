"""The flow for one issue: context -> engine -> validated decision -> plan -> comment."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import TypeVar

from issue_assistant.comment import Plan, render_comment, similar_evidence
from issue_assistant.config.labels import LabelsConfig
from issue_assistant.config.sections import Config, Strategy
from issue_assistant.context import Context
from issue_assistant.context_build import build_context, plan_notes
from issue_assistant.decision import Decision, Usage, validate
from issue_assistant.engines import Engine, create
from issue_assistant.engines.base import Deadline
from issue_assistant.engines.failures import EngineFailure, crashed, kind_of, retry_pause, spent
from issue_assistant.errors import AssistantError, EngineError, UserError
from issue_assistant.index import IssueIndex
from issue_assistant.index.duplicates import DuplicateSettings
from issue_assistant.learn.duplicate_model import Replayed
from issue_assistant.learn.learned import Beside, prior_settings
from issue_assistant.moment import Moment, open_moment
from issue_assistant.preset import preset_labels
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


T = TypeVar("T")


CANCEL_GRACE_S = 2.0  # how long a cancelled engine gets to stop before its thread is left


def bounded(
    call: Callable[[], T],
    seconds: float,
    what: str,
    cancel: Callable[[], None] | None = None,
    grace: float = CANCEL_GRACE_S,
) -> T:
    """`call()` in a worker thread, given up after `seconds` (a `limit` failure).

    On giving up, `cancel()` asks the call to stop and the worker is joined for up to `grace`
    seconds, so that a cancellable engine (a local model) does not go on computing, holding its
    model, behind the next issue. A call that ignores it is left running (a daemon thread) and
    logged."""
    box: dict[str, object] = {}

    def target() -> None:
        try:
            box["value"] = call()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            box["error"] = exc

    worker = threading.Thread(target=target, name=f"engine-{what}", daemon=True)
    worker.start()
    worker.join(max(seconds, 0.0))
    if worker.is_alive():
        if cancel is not None:
            cancel()
            worker.join(grace)
        if worker.is_alive():
            log.warning("the %s engine did not stop when its time was up; left running", what)
        raise EngineFailure(f"no answer within {seconds:.0f} s (timeout_seconds)", "limit")
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["value"]  # type: ignore[return-value]


def run_engine(engine: Engine, context: Context) -> Decision:
    """One engine on one issue within `[engine] timeout_seconds`, transient failures retried.

    Any other exception than the assistant's own errors (and an interrupt) comes out as a
    `crash` EngineFailure."""
    try:
        return _run_engine(engine, context)
    except AssistantError:
        raise  # an EngineError is classified already; a UserError names what to fix
    except Exception as exc:  # noqa: BLE001 - classified, counted, answered by the fallback
        log.debug("engine %s crashed", engine.name, exc_info=True)
        raise crashed(exc, engine.name) from exc


def _run_engine(engine: Engine, context: Context) -> Decision:
    deadline = Deadline(engine.config.engine.timeout_seconds)
    engine.deadline = deadline

    def timed() -> Decision:
        start = time.perf_counter()
        decision = engine.decide(context)
        if decision.usage.latency_s:
            return decision
        usage = decision.usage.model_copy(update={"latency_s": time.perf_counter() - start})
        return decision.model_copy(update={"usage": usage})

    def once() -> Decision:
        return bounded(timed, deadline.remaining(), engine.name, cancel=deadline.cancel)

    attempts = 1 if engine.retries_itself else 3
    retries = 0
    while True:  # retried on transient failures while the time budget allows
        try:
            decision = once()
            break
        except EngineFailure as exc:
            pause = retry_pause(exc, retries + 1, attempts, deadline.remaining())
            if pause is None:
                raise
            time.sleep(pause)
            retries += 1
    usage = decision.usage
    if retries:
        usage = usage.model_copy(update={"retries": usage.retries + retries})
    return decision.model_copy(
        update={"usage": usage, "strategy": decision.strategy or engine.strategy}
    )


def _warm(engine: Engine, context: Context) -> None:
    """`engine.warm`, any exception in it a `crash` failure (the fallback answers)."""
    try:
        engine.warm(context)
    except AssistantError:
        raise
    except Exception as exc:  # noqa: BLE001 - classified like a crash in decide
        raise crashed(exc, engine.name) from exc


def decide(
    engine: Engine, context: Context, fallback: Engine | None = None
) -> tuple[Decision, str | None]:
    """Run the engine (timed); on failure run the fallback, or raise EngineError without one.

    A `setup` failure (a key refused, a login expired) is a UserError: it would fail every issue.
    """
    if fallback is not None:
        fallback.warm(context)  # before the primary can fail over to it (may fit a model)
    start = time.perf_counter()
    try:
        _warm(engine, context)
        decision = run_engine(engine, context)
        error = None
    except EngineError as exc:
        kind = kind_of(exc)
        if kind == "setup":
            raise UserError(f"the {engine.name} engine cannot run: {exc}") from exc
        if fallback is None or fallback.name == engine.name:
            raise
        log.warning(
            "engine %s failed (%s: %s); falling back to %s", engine.name, kind, exc, fallback.name
        )
        decision = run_engine(fallback, context)
        used = spent(exc) or Usage()
        usage = decision.usage.model_copy(
            update={
                "failure": kind,
                "tokens_in": decision.usage.tokens_in + used.tokens_in,
                "tokens_out": decision.usage.tokens_out + used.tokens_out,
                "cost_usd": decision.usage.cost_usd + used.cost_usd,
                "cost_known": decision.usage.cost_known and used.cost_known,
                "turns": decision.usage.turns + used.turns,
                "tool_calls": decision.usage.tool_calls + used.tool_calls,
                "reasks": used.reasks,
            }
        )
        decision = decision.model_copy(update={"usage": usage, "fallback_from": engine.name})
        error = f"{engine.name} ({kind}): {exc}"
    if decision.fallback_from:
        usage = decision.usage.model_copy(update={"latency_s": time.perf_counter() - start})
        decision = decision.model_copy(update={"usage": usage})
    if not decision.candidates:
        decision = decision.model_copy(
            update={"candidates": [c.issue.number for c in context.candidates]}
        )
    return decision, error


def engines_for(
    config: Config,
    labels: LabelsConfig,
    name: str | None = None,
    strategy: Strategy | None = None,
) -> tuple[Engine, Engine | None]:
    """The engine (with the chosen strategy, else `[engine] strategy`) and its fallback."""
    engine = create(name or config.engine.name, config, labels, strategy or config.engine.strategy)
    fb = config.engine.fallback
    fallback = create(fb, config, labels) if fb and fb != engine.name else None
    return engine, fallback


def check_engines(*engines: Engine | None) -> None:
    """Check once, before any issue, that each engine can run (a UserError naming the fix)."""
    for engine in engines:
        if engine is not None:
            engine.check_ready()


def analyze(
    moment: Moment,
    issue: Issue,
    *,
    config: Config,
    engine: Engine,
    fallback: Engine | None = None,
    opened_with: set[str] | None = None,
) -> Analysis:
    """Analyze `issue` at `moment` (its time: the moment's, else the issue's creation).

    `opened_with`: the labels the issue was opened with (its template's), when `issue.events`
    cannot tell (a live issue): the plan then says where the labels it left alone came from."""
    labels = moment.labels
    context = build_context(moment, issue, config)
    raw, error = decide(engine, context, fallback)
    decision = validate(raw, labels, moment.tracker, issue, context.form_answers())
    settings = duplicate_settings(context, engine, fallback)
    evidence = similar_evidence(
        context,
        decision.duplicate.number if decision.duplicate else None,
        threshold=settings.threshold,
        candidates=config.duplicates.candidates,
        weights=settings.weights,
    )
    plan = Plan.from_decision(
        decision,
        repository=moment.repository,
        issue=issue.number,
        reporter=issue.user.login,
        created_at=context.as_of,
        evidence=evidence,
        labels_before=list(issue.labels),
        preset=preset_labels(issue, labels, decision, opened_with),
    ).model_copy(update=plan_notes(context))
    comment = render_comment(plan, fallback_from=decision.fallback_from)
    return Analysis(issue, context, decision, plan, comment, error)


def duplicate_settings(context: Context, *engines: Engine | None) -> DuplicateSettings:
    """The duplicate weights and threshold of the first engine that has them (`similar`, or
    it as the fallback), else the shared data's prior: what the table's "related" is read by."""
    for e in engines:
        settings = e.duplicate_settings(context) if e is not None else None
        if settings is not None:
            return settings
    return prior_settings(context.index, None, "no engine with a duplicate score")


def replay(
    tracker: Tracker,
    number: int,
    *,
    index: IssueIndex,
    labels: LabelsConfig,
    config: Config,
    engine_name: str | None = None,
    strategy: Strategy | None = None,
    after: timedelta | None = None,
    engine: Engine | None = None,
) -> Analysis:
    """Issue `number` of `tracker` analysed as it was `after` its opening (a minute by default):
    the engines of `config` (or `engine_name`), checked ready, with their fallback; or `engine`
    alone, as given (one engine reused over many issues). An entry: the moment is built here."""
    from issue_assistant.tracker.asof import ONE_MINUTE, AsOfView

    view = AsOfView.for_issue(tracker, number, after=after or ONE_MINUTE)
    fallback = None
    if engine is None:
        engine, fallback = engines_for(config, labels, engine_name, strategy)
        check_engines(engine, fallback)
    moment = open_moment(view, index, labels, config, Beside(), as_of=view.moment)
    return analyze(moment, view.target(), config=config, engine=engine, fallback=fallback)


def replay_pairs(
    base: Moment, issue: Issue, *, config: Config, again: Mapping[int, frozenset[int]]
) -> Replayed:
    """`issue` replayed a minute after its opening in `base` (the repository as it is, its
    indexes built once): its candidates' pair features, and which of them are its original
    (none for an issue that is not a known duplicate; the earlier copies of a report its
    reporter filed again, `again` from `tracker.duplicates.refiled`): what the duplicate weights
    and threshold are fit on."""
    from issue_assistant.index import duplicates
    from issue_assistant.tracker.asof import AsOfView
    from issue_assistant.tracker.duplicates import known_duplicate, originals

    view = AsOfView.for_issue(base.tracker, issue.number)
    context = build_context(base.at(view, view.moment), view.target(), config)
    accept = frozenset(originals(base.tracker, issue, again))
    limit = config.duplicates.candidates
    pairs = tuple((c.issue.number, f) for c, f in duplicates.pair_features(context, limit))
    duplicate = known_duplicate(issue, again)
    return Replayed(context.issue.created_at, duplicate, pairs, accept, issue.number)
