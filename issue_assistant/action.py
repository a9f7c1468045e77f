"""The GitHub Action's entrypoint (`python -m issue_assistant.action`): inputs in, outputs out.

`INPUT_COMMAND` is `analyze` (on `issues` events), `apply` (on `issue_comment`, `schedule` and
`workflow_dispatch`), `backlog` (on `workflow_dispatch` or a schedule) or `index` (on a
schedule: the index and label model kept up to date ahead of the events). The logic lives in
`live`, `approve`, `backlog` and `index_run`; this module only reads the environment and the
event, and writes the job summary and the step outputs.
"""

from __future__ import annotations

import json
import logging
import sys
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from issue_assistant.approve.sweep import ApplyResult, Approver
from issue_assistant.config.files import load_both
from issue_assistant.config.labels import LabelsConfig
from issue_assistant.config.sections import Config
from issue_assistant.errors import AssistantError, UserError, print_action
from issue_assistant.followup import follow_up_all
from issue_assistant.live import LiveResult, analyze_live, connect, skip_reason, writing
from issue_assistant.render import render
from issue_assistant.sanitize import RAW_KEYS, LogSanitizer, sanitize, sanitize_json
from issue_assistant.settings import Settings, using
from issue_assistant.tracker.base import WritableTracker
from issue_assistant.votes import slash_command
from issue_assistant.webhook import CommentPayload, IssuesPayload, parse_payload
from issue_assistant.writes import resolve_writes

log = logging.getLogger("issue_assistant")
RETRY_LOG = logging.getLogger("github.GithubRetry")  # says when a rate limit is waited out
# In apply's output only the reasons (error messages among them) are free text.
APPLY_RAW = RAW_KEYS | {"actor", "changes", "writes", "comment_url", "labels"}


class ActionsFormatter(logging.Formatter):
    """Errors and warnings as workflow commands (one annotated line each), the rest plain."""

    def format(self, record: logging.LogRecord) -> str:
        text = " ".join(super().format(record).splitlines())
        if record.levelno >= logging.ERROR:
            return f"::error::{text}"
        if record.levelno >= logging.WARNING:
            return f"::warning::{text}"
        return text


def setup_logging(in_actions: bool) -> logging.Handler:
    """A stderr handler on the package logger (records still propagate, e.g. to pytest)."""
    handler = logging.StreamHandler(sys.stderr)
    fmt = "%(message)s"
    handler.setFormatter(ActionsFormatter(fmt) if in_actions else logging.Formatter(fmt))
    for logger in (log, RETRY_LOG):
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
    return handler


__all__ = ["main", "run"]


@dataclass
class Outcome:
    """What a run produced: the outputs, the summary text and the exit status."""

    outputs: dict[str, str] = field(default_factory=dict)
    summary: str = ""
    status: int = 0


def load_event(settings: Settings) -> Any:
    """The event payload as JSON (checked against the fields used by `run_analyze`/`run_apply`)."""
    path = settings.event_path
    if not path:
        return {}
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UserError(f"cannot read the event ({exc})", where=path) from None


def _where(env: Settings) -> str:
    name = env.event_name or "event"
    return f"{env.event_path or 'the event'} ({name} payload)"


def run_analyze(
    env: Settings,
    event: dict[str, Any],
    tracker: WritableTracker | None,
    labels: LabelsConfig,
    config: Config,
    writes: str,
    now: datetime | None,
) -> Outcome:
    full_name = env.require_repository()
    parsed = parse_payload(IssuesPayload, event, _where(env))
    payload = parsed.issue
    if payload is None:
        result = LiveResult(full_name, 0, writes, skipped="no issue in the event")  # type: ignore[arg-type]
        log.info("skipped: no issue in the event")
    elif reason := skip_reason(payload.to_issue(now or datetime.now(UTC)), config):
        number = payload.number
        result = LiveResult(full_name, number, writes, skipped=reason)  # type: ignore[arg-type]
        log.info("%s#%d: skipped: %s", full_name, number, reason)
    else:
        result = analyze_live(
            full_name,
            payload.number,
            labels=labels,
            config=config,
            engine_name=env.engine,
            writes=writes,
            tracker=tracker or _connect(env, config),
            now=now,
            # `opened`: the payload's labels are those it was opened with (its template's)
            opened_labels=[lab.name for lab in payload.labels]
            if parsed.action == "opened"
            else None,
        )
    plan = result.plan if not result.skipped else None
    outputs = {
        "decision": plain_json(result.decision or {}, full_name),
        "labels": ",".join(plan.labels()) if plan else "",
        "duplicate": str(plan.duplicate.number) if plan and plan.duplicate else "",
        "comment-url": result.comment_url or "",
        "skipped": "true" if result.skipped else "false",
    }
    summary = render_summary(
        command="analyze", writes=writes, result=result, done=result.done, repository=full_name
    )
    return Outcome(outputs, summary)


def run_apply(
    env: Settings,
    event: dict[str, Any],
    tracker: WritableTracker | None,
    labels: LabelsConfig,
    config: Config,
    writes: str,
    now: datetime | None,
) -> Outcome:
    numbers: list[int] | None = None
    reason = None
    answer: int | None = None  # the issue whose reporter commented: a follow-up only
    if env.event_name == "issue_comment":
        payload = parse_payload(CommentPayload, event, _where(env))
        login = payload.comment.user.login if payload.comment.user else ""
        author = payload.issue.user.login if payload.issue.user else ""
        if not slash_command(payload.comment.body):
            reason = "the comment is not an /assistant command"
            # The reporter's reply on an issue the payload shows waiting for their answer.
            waiting = labels.needs_info and any(
                lab.name.casefold() == labels.needs_info.casefold() for lab in payload.issue.labels
            )
            if waiting and login.lower() == author.lower() and not payload.issue.pull_request:
                reason, answer = None, payload.issue.number
        elif login.lower() == config.approval.bot_login.lower():
            reason = "the comment is the assistant's own"
        elif payload.issue.pull_request is not None:
            reason = "a pull request"
        else:
            numbers = [payload.issue.number]
    elif not isinstance(event, dict):
        raise UserError("the event payload must be a JSON object", where=_where(env))
    results: list[ApplyResult] = []
    if reason:
        log.info("skipped: %s", reason)
    else:
        tracker = tracker or _connect(env, config)
        writing(tracker, writes)
        approver = Approver(tracker, labels, config, writes=writes, now=now)  # type: ignore[arg-type]
        moment = now or datetime.now(UTC)
        if answer is not None:  # the reporter answered: only the follow-up
            results = follow_up_all(tracker, labels, config, writes, moment, [answer])
        else:
            results = approver.run(numbers)
            if numbers is None:  # the sweep: reporters' answers too (only what it proposed)
                found = follow_up_all(tracker, labels, config, writes, moment)
                results += [r for r in found if r.status == "proposed"]
    decided = [r for r in results if r.status in ("approved", "dismissed")]
    full_name = env.repository or ""
    approved = [r for r in decided if r.status == "approved"]
    added = list(dict.fromkeys(name for r in approved for name in r.labels))
    outputs = {
        "decision": plain_json([r.to_json() for r in results], full_name, raw_keys=APPLY_RAW),
        "labels": ",".join(added),
        "duplicate": next((str(r.duplicate) for r in approved if r.duplicate), ""),
        "comment-url": next((r.comment_url or "" for r in decided), ""),
        "skipped": "false" if decided else "true",
    }
    done = [w for r in results for w in r.writes]
    summary = render_summary(
        command="apply", writes=writes, results=results, done=done, repository=full_name
    )
    failed = any(r.status == "failed" for r in results)
    return Outcome(outputs, summary, 1 if failed else 0)


def render_summary(
    *,
    command: str,
    writes: str,
    done: list[str],
    repository: str,
    result: LiveResult | None = None,
    results: list[ApplyResult] | None = None,
) -> str:
    """The job summary of `analyze` (its `result`) or `apply` (its `results`): the plan's labels,
    their words and the engine's failure are given as values, so the template calls nothing
    back in the plan or the result."""
    plan = result.plan if result is not None and not result.skipped else None
    return render(
        "summary.md.j2",
        command=command,
        writes=writes,
        result=result,
        results=results,
        labels=plan.labels() if plan else [],
        words=plan.words() if plan else {},
        error=result.error if result is not None else None,
        done=done,
        repository=repository,
    )


def plain_json(value: Any, repository: str, raw_keys: frozenset[str] = RAW_KEYS) -> str:
    """An output a later step reads with `fromJSON`: plain JSON (no Markdown escapes), its
    free text still cleaned of mentions, outside links and control characters."""
    clean = sanitize_json(value, repository, raw_keys=raw_keys, plain=True)
    return json.dumps(clean, indent=2, sort_keys=True, ensure_ascii=False)


def _flag(value: str | None, name: str) -> bool:
    text = (value or "false").strip().lower()
    if text not in ("true", "false"):
        raise UserError(f"the {name} input must be true or false, not {value!r}")
    return text == "true"


def backlog_inputs(env: Settings) -> tuple[int | None, str | None, bool, bool]:
    """`limit`, `order`, `duplicates` and `post`, checked (a UserError names the input)."""
    limit = None
    if env.limit:
        try:
            limit = int(env.limit)
        except ValueError:
            limit = 0
        if limit < 1:
            raise UserError(f"the limit input must be a whole number of at least 1: {env.limit!r}")
    order = (env.order or "").lower() or None
    if order not in (None, "oldest", "newest"):
        raise UserError(f"the order input must be oldest or newest, not {env.order!r}")
    duplicates, post = _flag(env.duplicates, "duplicates"), _flag(env.post, "post")
    if post and not duplicates:
        raise UserError("the post input goes with duplicates: true")
    return limit, order, duplicates, post


def run_backlog_step(
    env: Settings,
    event: dict[str, Any],
    tracker: WritableTracker | None,
    labels: LabelsConfig,
    config: Config,
    writes: str,
    now: datetime | None,
) -> Outcome:
    """`backlog` (or `backlog --duplicates`): the proposals, or the groups, in the summary."""
    from issue_assistant.backlog.duplicates import duplicates_live
    from issue_assistant.backlog.report import outputs, render_run, summary_text
    from issue_assistant.backlog.run import run_backlog

    limit, order, duplicates, post = backlog_inputs(env)
    tracker = tracker or _connect(env, config)
    if duplicates:
        found = duplicates_live(
            tracker,
            labels,
            config,
            writes=writes,
            post=post,
            limit=limit,
            now=now,  # type: ignore[arg-type]
            api_url=env.api_url,
        )
        data, text, run = found.outputs(), found.markdown, found.run
    else:
        run = run_backlog(
            tracker,
            labels,
            config,
            writes=writes,
            limit=limit,
            order=order,  # type: ignore[arg-type]
            engine_name=env.engine,
            now=now,
        )
        data, text = outputs(run), render_run(run, env.api_url)
    full_name = env.repository or ""
    proposed = run.proposed if run is not None else []
    result = {
        "decision": plain_json(data, full_name, APPLY_RAW),
        "labels": "",  # many issues: each one's labels are in `decision`
        "duplicate": "",
        "comment-url": next((i.comment_url or "" for i in proposed), ""),
        "skipped": "false" if proposed or (duplicates and not post and data["groups"]) else "true",
    }
    failed = run is not None and bool(run.failed)
    return Outcome(result, summary_text(text, None), 1 if failed else 0)


def run_index_step(
    env: Settings,
    event: dict[str, Any],
    tracker: WritableTracker | None,
    labels: LabelsConfig,
    config: Config,
    writes: str,
    now: datetime | None,
) -> Outcome:
    """`index` (on a schedule or by hand): the index and the label model brought up to date
    ahead of the runs that post comments; nothing is written to GitHub."""
    from issue_assistant.index_run import run_index

    tracker = tracker or _connect(env, config)
    done = run_index(tracker, labels, config, now=now)
    result = {
        "decision": json.dumps(done.outputs(), indent=2, sort_keys=True),
        "labels": "",
        "duplicate": "",
        "comment-url": "",
        "skipped": "false",
    }
    return Outcome(result, render("index_run.md.j2", done=done))


def _connect(env: Settings, config: Config) -> WritableTracker:
    return connect(
        env.require_repository(),
        env.require_token(),
        base_url=env.api_url,
        bot_login=config.approval.bot_login,
    )


def write_outputs(path: str | None, outputs: dict[str, str]) -> None:
    """Append to `$GITHUB_OUTPUT`; `decision` and multi-line values use the delimiter syntax."""
    if not path:
        return
    with open(path, "a", encoding="utf-8") as fh:
        for name, value in outputs.items():
            if name == "decision" or "\n" in value or "\r" in value:
                delimiter = f"ghadelimiter_{uuid.uuid4()}"
                fh.write(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
            else:
                fh.write(f"{name}={value}\n")


def write_summary(path: str | None, text: str) -> None:
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(text)


STEPS = {
    "analyze": run_analyze,
    "apply": run_apply,
    "backlog": run_backlog_step,
    "index": run_index_step,
}


def run(
    env: Mapping[str, str], *, tracker: WritableTracker | None = None, now: datetime | None = None
) -> int:
    """One Action run; raises an AssistantError (UserError, GitHubError, EngineError) for `main`
    to report. `env` is read once, into the settings the rest of the run uses."""
    settings = Settings.from_env(env)
    with using(settings):
        return _run(settings, tracker, now)


def _run(env: Settings, tracker: WritableTracker | None, now: datetime | None) -> int:
    command = (env.command or "analyze").lower()
    if command not in STEPS:
        raise UserError(f"command must be analyze, apply, backlog or index, not {command!r}")
    root = Path(env.workspace or Path.cwd())
    labels, config = load_both(env.labels, env.config, root=root)
    if model := env.model:
        engine = config.engine.model_copy(update={"model": model})
        config = config.model_copy(update={"engine": engine})
    writes = resolve_writes(env.writes, config, env.actions)
    if not env.repository:
        raise UserError("GITHUB_REPOSITORY is not set")
    event = load_event(env)
    step = STEPS[command]
    outcome = step(env, event, tracker, labels, config, writes, now)
    write_outputs(env.output, outcome.outputs)
    write_summary(env.step_summary, outcome.summary)
    return outcome.status


def main(env: Mapping[str, str] | None = None, *, tracker: WritableTracker | None = None) -> int:
    """Run from the environment; one `::error::` line (sanitized like every log line) and a
    non-zero status on any failure."""
    try:
        settings = Settings.from_env(env)
    except AssistantError as exc:
        return print_action(exc)
    repository = settings.repository or ""
    handler = setup_logging(settings.actions)
    handler.addFilter(LogSanitizer(repository))
    try:
        with using(settings):
            return _run(settings, tracker, None)
    except AssistantError as exc:
        return print_action(exc, clean=lambda text: sanitize(text, repository, 2000, plain=True))
    finally:
        log.removeHandler(handler)
        RETRY_LOG.removeHandler(handler)


if __name__ == "__main__":
    sys.exit(main())
