"""The GitHub Action's entrypoint (`python -m issue_assistant.action`): inputs in, outputs out.

`INPUT_COMMAND` is `analyze` (on `issues` events) or `apply` (on `issue_comment`, `schedule` and
`workflow_dispatch`). The logic lives in `live` and `approve`; this module only reads the
environment and the event, and writes the job summary and the step outputs.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from issue_assistant.approve import ApplyResult, Approver, resolve_writes, slash_command
from issue_assistant.config import Config, LabelsConfig, load_both
from issue_assistant.errors import EngineError, GitHubError, UserError
from issue_assistant.live import LiveResult, analyze_live, connect, skip_reason
from issue_assistant.render import render
from issue_assistant.sanitize import RAW_KEYS, LogSanitizer, sanitize_json
from issue_assistant.tracker.base import WritableTracker
from issue_assistant.webhook import CommentPayload, IssuesPayload, parse_payload

log = logging.getLogger("issue_assistant")
RETRY_LOG = logging.getLogger("github.GithubRetry")  # says when a rate limit is waited out
# In apply's output only the reasons (error messages among them) are free text.
APPLY_RAW = RAW_KEYS | {"actor", "changes", "writes", "comment_url"}


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


def get_input(env: Mapping[str, str], name: str) -> str:
    """An action input as the runner passes it (`INPUT_NAME`, hyphens kept or turned into `_`)."""
    upper = name.upper()
    for key in (f"INPUT_{upper}", f"INPUT_{upper.replace('-', '_')}"):
        if env.get(key, "").strip():
            return env[key].strip()
    return ""


@dataclass
class Outcome:
    """What a run produced: the outputs, the summary text and the exit status."""

    outputs: dict[str, str] = field(default_factory=dict)
    summary: str = ""
    status: int = 0


def load_event(env: Mapping[str, str]) -> Any:
    """The event payload as JSON (checked against the fields used by `run_analyze`/`run_apply`)."""
    path = env.get("GITHUB_EVENT_PATH")
    if not path:
        return {}
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UserError(f"cannot read the event ({exc})", where=path) from None


def _where(env: Mapping[str, str]) -> str:
    name = env.get("GITHUB_EVENT_NAME") or "event"
    return f"{env.get('GITHUB_EVENT_PATH') or 'the event'} ({name} payload)"


def run_analyze(
    env: Mapping[str, str],
    event: dict[str, Any],
    tracker: WritableTracker | None,
    labels: LabelsConfig,
    config: Config,
    writes: str,
    now: datetime | None,
) -> Outcome:
    full_name = env.get("GITHUB_REPOSITORY", "")
    payload = parse_payload(IssuesPayload, event, _where(env)).issue
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
            engine_name=get_input(env, "engine") or None,
            writes=writes,
            tracker=tracker or _connect(env, config),
            now=now,
        )
    outputs = {
        "decision": json.dumps(
            sanitize_json(result.decision or {}, full_name), indent=2, sort_keys=True
        ),
        "comment-url": result.comment_url or "",
        "skipped": "true" if result.skipped else "false",
    }
    summary = render(
        "summary.md.j2",
        command="analyze",
        writes=writes,
        result=result,
        done=result.done,
        repository=full_name,
    )
    return Outcome(outputs, summary)


def run_apply(
    env: Mapping[str, str],
    event: dict[str, Any],
    tracker: WritableTracker | None,
    labels: LabelsConfig,
    config: Config,
    writes: str,
    now: datetime | None,
) -> Outcome:
    numbers: list[int] | None = None
    reason = None
    if env.get("GITHUB_EVENT_NAME") == "issue_comment":
        payload = parse_payload(CommentPayload, event, _where(env))
        login = payload.comment.user.login if payload.comment.user else ""
        if not slash_command(payload.comment.body):
            reason = "the comment is not an /assistant command"
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
        approver = Approver(tracker, labels, config, writes=writes, now=now)  # type: ignore[arg-type]
        results = approver.run(numbers)
    decided = [r for r in results if r.status in ("approved", "dismissed")]
    full_name = env.get("GITHUB_REPOSITORY", "")
    outputs = {
        "decision": json.dumps(
            sanitize_json([r.to_json() for r in results], full_name, raw_keys=APPLY_RAW),
            indent=2,
            sort_keys=True,
        ),
        "comment-url": next((r.comment_url or "" for r in decided), ""),
        "skipped": "false" if decided else "true",
    }
    done = [w for r in results for w in r.writes]
    summary = render(
        "summary.md.j2",
        command="apply",
        writes=writes,
        results=results,
        done=done,
        repository=full_name,
    )
    failed = any(r.status == "failed" for r in results)
    return Outcome(outputs, summary, 1 if failed else 0)


def _connect(env: Mapping[str, str], config: Config) -> WritableTracker:
    return connect(
        env["GITHUB_REPOSITORY"],
        get_input(env, "github-token") or env.get("GITHUB_TOKEN") or None,
        base_url=env.get("GITHUB_API_URL") or None,
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


def run(
    env: Mapping[str, str], *, tracker: WritableTracker | None = None, now: datetime | None = None
) -> int:
    """One Action run; raises UserError, GitHubError or EngineError for `main` to report."""
    command = (get_input(env, "command") or "analyze").lower()
    if command not in ("analyze", "apply"):
        raise UserError(f"command must be analyze or apply, not {command!r}")
    root = Path(env.get("GITHUB_WORKSPACE") or Path.cwd())
    labels, config = load_both(
        get_input(env, "labels") or None, get_input(env, "config") or None, root=root
    )
    if model := get_input(env, "model"):
        engine = config.engine.model_copy(update={"model": model})
        config = config.model_copy(update={"engine": engine})
    writes = resolve_writes(get_input(env, "writes"), config, env.get("GITHUB_ACTIONS") == "true")
    if not env.get("GITHUB_REPOSITORY"):
        raise UserError("GITHUB_REPOSITORY is not set")
    event = load_event(env)
    step = run_analyze if command == "analyze" else run_apply
    outcome = step(env, event, tracker, labels, config, writes, now)
    write_outputs(env.get("GITHUB_OUTPUT"), outcome.outputs)
    write_summary(env.get("GITHUB_STEP_SUMMARY"), outcome.summary)
    return outcome.status


def main(env: Mapping[str, str] | None = None, *, tracker: WritableTracker | None = None) -> int:
    """Run from the environment; one log line and a non-zero status on any failure."""
    env = os.environ if env is None else env
    if key := get_input(env, "anthropic-api-key"):
        os.environ["ANTHROPIC_API_KEY"] = key  # where the engine's client looks for it
    handler = setup_logging(env.get("GITHUB_ACTIONS") == "true")
    handler.addFilter(LogSanitizer(env.get("GITHUB_REPOSITORY", "")))
    try:
        return run(env, tracker=tracker)
    except UserError as exc:
        log.error("error: %s", exc)
        return exc.exit_code
    except GitHubError as exc:
        log.error("%s; nothing more was written", exc)
        return 1
    except EngineError as exc:
        log.error("engine failed: %s; nothing was written", exc)
        return 1
    finally:
        log.removeHandler(handler)
        RETRY_LOG.removeHandler(handler)


if __name__ == "__main__":
    sys.exit(main())
