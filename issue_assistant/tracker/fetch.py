"""Fetch a repository's tracker from GitHub into a snapshot file (SNAPSHOT.md), resumably.

One paginated listing of all issues and pull requests, then one timeline per issue (its label,
close and duplicate events and its comments), and a permission lookup per distinct actor.
Each listed issue, the listing's end and each finished issue are appended to
`OUT.partial.jsonl`, so an interrupted run resumes where it stopped (the listing from its last
update time, the timelines from the first issue not finished); the snapshot itself is written
atomically at the end and the partial file removed.
"""

from __future__ import annotations

import io
import json
import logging
import os
import re
import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import IO, Any, BinaryIO

from rich.console import Console

from issue_assistant.atomic import write_atomic_with
from issue_assistant.errors import GitHubError
from issue_assistant.progress import Progress
from issue_assistant.tracker.client import Throttle, github_retry
from issue_assistant.tracker.fetch_context import ContextState, fetch_context
from issue_assistant.tracker.github_tracker import TRIAGE_ROLES, WRITE_ROLES, GitHubTracker
from issue_assistant.tracker.models import Comment, Event, Issue
from issue_assistant.tracker.snapshot import Snapshot, issue_record, write_snapshot

log = logging.getLogger(__name__)

PARTIAL_SUFFIX = ".partial.jsonl"
PARTIAL_VERSION = 1
# A long fetch may meet GitHub's primary rate limit (1,000 requests/hour for GITHUB_TOKEN):
# wait up to a little over an hour for the reset. 0.1 s between requests stays under the
# secondary limit of 900 REST points per minute.
FETCH_MAX_WAIT = 3900.0
FETCH_THROTTLE = Throttle(between_requests=0.1, between_writes=1.0)


def partial_path(out_path: str | os.PathLike[str]) -> Path:
    """Where the unfinished state of a fetch into `out_path` is kept."""
    out = Path(out_path)
    return out.with_name(out.name + PARTIAL_SUFFIX)


def duplicate_pattern(full_name: str) -> re.Pattern[str]:
    """GitHub's "Duplicate of #N" (or of this repository's issue URL) at the start of a comment."""
    url = rf"https?://[^/\s]+/{re.escape(full_name)}/issues/"
    return re.compile(rf"\A\s*duplicate of\s+(?:#|{url})(\d+)\b", re.IGNORECASE)


def find_duplicate_of(
    number: int,
    events: list[Event],
    comments: list[Comment],
    role_of: Callable[[str], str],
    pattern: re.Pattern[str],
) -> int | None:
    """The original named by the last "Duplicate of #N" comment by someone with write access.

    `role_of` is asked only about the authors of such comments. A later `unmarked_as_duplicate`
    event cancels it.
    """
    target: int | None = None
    marked_at: datetime | None = None
    for comment in sorted(comments, key=lambda c: c.created_at):
        m = pattern.match(comment.body or "")
        if m is None or int(m[1]) == number or comment.user.is_bot:
            continue
        if role_of(comment.user.login) in WRITE_ROLES:
            target, marked_at = int(m[1]), comment.created_at
    if marked_at is not None and any(
        e.event == "unmarked_as_duplicate" and e.created_at >= marked_at for e in events
    ):
        return None
    return target


def marked_duplicate(events: list[Event]) -> bool:
    """Marked or closed as a duplicate and not unmarked since (GraphQL may name the original)."""
    marked = False
    for e in sorted(events, key=lambda e: e.created_at):
        if e.event == "marked_as_duplicate" or (
            e.event == "closed" and e.state_reason == "duplicate"
        ):
            marked = True
        elif e.event == "unmarked_as_duplicate":
            marked = False
    return marked


def _listed_record(issue: Issue) -> dict[str, Any]:
    """A listed issue's line (as GitHub's list gave it, its history not fetched yet)."""
    return {**issue_record(issue), "kind": "listed"}


def canonical_or_unknown(tracker: GitHubTracker, number: int) -> int | None:
    """The original GraphQL names for an issue closed as a duplicate with GitHub's button, or
    None (unknown) when that optional lookup fails: the issue is kept, the run goes on."""
    try:
        return tracker.duplicate_canonical(number)
    except GitHubError as exc:
        log.warning("#%d: the original it duplicates is unknown (%s)", number, exc)
        return None


class PartialState:
    """The partial file: a header line, then `permission` and `issue` lines as they are known."""

    def __init__(self, path: Path, full_name: str, fetched_at: datetime, resume: bool) -> None:
        self.path = path
        self.full_name = full_name
        self.fetched_at = fetched_at
        self.roles: dict[str, str] = {}
        self.issues: dict[int, Issue] = {}
        # The listing, kept as it goes (an interrupted one resumes from its last update time)
        self.listed: dict[int, Issue] = {}
        self.listing_done = False
        self.context = ContextState()
        self.resumed = False
        if resume and path.is_file():
            self._load()
        elif path.exists():
            path.unlink()
        self._rewrite()
        self._fh: IO[str] | None = open(path, "a", encoding="utf-8")  # noqa: SIM115

    def _load(self) -> None:
        lines = self.path.read_text(encoding="utf-8").splitlines()
        records: list[dict[str, Any]] = []
        for line in lines:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line cut short by the interruption
            if isinstance(record, dict):
                records.append(record)
        header = records[0] if records else {}
        if (
            header.get("kind") != "partial"
            or header.get("version") != PARTIAL_VERSION
            or str(header.get("full_name", "")).lower() != self.full_name.lower()
        ):
            return  # another repository or format: start over
        self.resumed = True
        self.fetched_at = datetime.fromisoformat(header["fetched_at"].replace("Z", "+00:00"))
        for record in records[1:]:
            if record.get("kind") == "permission":
                self.roles[record["login"]] = record["role"]
            elif record.get("kind") == "issue":
                issue = Issue.model_validate(record)
                self.issues[issue.number] = issue
            elif record.get("kind") == "listed":
                issue = Issue.model_validate(record)
                self.listed[issue.number] = issue
            elif record.get("kind") == "listing":
                self.listing_done = bool(record.get("complete"))
            else:
                self.context.load(record)

    def _rewrite(self) -> None:
        def lines(raw: BinaryIO) -> None:
            fh = io.TextIOWrapper(raw, encoding="utf-8")
            fh.write(json.dumps(self._header()) + "\n")
            for login, role in self.roles.items():
                fh.write(json.dumps({"kind": "permission", "login": login, "role": role}) + "\n")
            for issue in self.listed.values():
                fh.write(json.dumps(_listed_record(issue), ensure_ascii=False) + "\n")
            if self.listing_done:
                fh.write(json.dumps({"kind": "listing", "complete": True}) + "\n")
            for issue in self.issues.values():
                fh.write(json.dumps(issue_record(issue), ensure_ascii=False) + "\n")
            for record in self.context.records():
                fh.write(json.dumps(record, ensure_ascii=False) + "\n")
            fh.flush()
            fh.detach()

        write_atomic_with(self.path, lines)

    def _header(self) -> dict[str, Any]:
        return {
            "kind": "partial",
            "version": PARTIAL_VERSION,
            "full_name": self.full_name,
            "fetched_at": self.fetched_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
        }

    def _append(self, record: dict[str, Any]) -> None:
        assert self._fh is not None
        self._fh.write(json.dumps(record, ensure_ascii=False) + "\n")
        self._fh.flush()

    def add_role(self, login: str, role: str) -> None:
        self.roles[login] = role
        self._append({"kind": "permission", "login": login, "role": role})

    def add_listed(self, issue: Issue) -> None:
        self.listed[issue.number] = issue
        self._append(_listed_record(issue))

    def listing_complete(self) -> None:
        self.listing_done = True
        self._append({"kind": "listing", "complete": True})

    def listed_since(self) -> datetime | None:
        """Where an interrupted listing goes on from: the last update time it kept."""
        times = [i.updated_at for i in self.listed.values() if i.updated_at is not None]
        return max(times, default=None)

    def add_issue(self, issue: Issue) -> None:
        self.issues[issue.number] = issue
        self._append(issue_record(issue))

    def add_context(self, record: dict[str, Any]) -> None:
        self.context.load(record)
        self._append(record)

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


class _Reporter:
    """The snapshot's lines and its progress (`issue_assistant.progress`: a bar on a terminal,
    a line every ten seconds otherwise); a long wait is said with its end."""

    def __init__(self, console: Console | None, enabled: bool, every: float | None = None) -> None:
        self.stream = console.file if console is not None else sys.stderr
        self.terminal = console.is_terminal if console is not None else None
        self.enabled, self.every = enabled, every
        self.progress = self.phase("fetched")
        self.line = self.progress.line

    def phase(self, what: str) -> Progress:
        """A progress of its own on the same stream (listing, before the total is known)."""
        progress = Progress(what, stream=self.stream, terminal=self.terminal, every=self.every)
        progress.enabled = progress.enabled and self.enabled
        return progress

    def start(self, total: int, done: int) -> None:
        self.line(f"{total} issues and pull requests, {done} already fetched")
        self.progress.start(total, done)

    def advance(self, number: int) -> None:
        self.progress.advance(note=f"#{number}")

    def waiting(self, seconds: float, until: datetime, why: str) -> None:
        """A long wait (a rate limit): said on the bar, or as a line, with when it ends; not a
        frozen bar with a stale time remaining."""
        text = f"GitHub: {why}; waiting {seconds:.0f} s, until {until:%H:%M:%S} UTC"
        if self.progress.enabled:
            self.line(text)
            self.progress.describe(f"waiting until {until:%H:%M:%S} UTC")  # on the bar
        else:
            log.warning("%s", text)

    def stop(self) -> None:
        self.progress.stop()


def _tracker_for(full_name: str, token: str | None, base_url: str | None) -> GitHubTracker:
    from issue_assistant.settings import current

    token = token or current().require_token()
    retry = github_retry(total=30, max_wait=FETCH_MAX_WAIT, backoff_factor=2.0)
    return GitHubTracker(full_name, token, base_url, retry=retry, throttle=FETCH_THROTTLE)


def _with_history(
    tracker: GitHubTracker, issue: Issue, state: PartialState, pattern: re.Pattern[str]
) -> Issue:
    """`issue` with its events, comments and `duplicate_of`; looks up new actors' roles."""
    events, comments = tracker.history(issue.number)

    def role_of(login: str) -> str:
        if login not in state.roles:
            state.add_role(login, tracker.permission(login))
        return state.roles[login]

    for event in events:
        if event.actor is not None and not event.actor.is_bot:
            role_of(event.actor.login)
    duplicate_of = find_duplicate_of(issue.number, events, comments, role_of, pattern)
    if duplicate_of is None and marked_duplicate(events):
        duplicate_of = canonical_or_unknown(tracker, issue.number)
    comments = [c.model_copy(update={"url": None}) for c in comments]
    return issue.model_copy(
        update={"events": events, "comments": comments, "duplicate_of": duplicate_of}
    )


def fetch_snapshot(
    source: GitHubTracker | str,
    out_path: str | os.PathLike[str],
    *,
    resume: bool = True,
    progress: bool = True,
    token: str | None = None,
    base_url: str | None = None,
    fetched_at: datetime | None = None,
    console: Console | None = None,
    fixed_by: bool = False,
) -> Snapshot:
    """Write a snapshot of a repository (`OWNER/NAME` or a `GitHubTracker`) to `out_path`.

    With `resume`, issues already in `OUT.partial.jsonl` (from an interrupted run) are not
    fetched again, and that run's `fetched_at` is kept. Releases and discussions follow the
    issues; with `fixed_by`, also the files changed by each pull request that says "Fixes #N"
    about a closed issue. Errors propagate (`GitHubError`,
    `UserError`) and leave the partial file for the next run.
    """
    tracker = _tracker_for(source, token, base_url) if isinstance(source, str) else source
    out = Path(out_path)
    report = _Reporter(console, progress)
    tracker.record.on_wait = report.waiting
    repository = tracker.repository
    state = PartialState(
        partial_path(out), tracker.full_name, fetched_at or repository.fetched_at, resume
    )
    pattern = duplicate_pattern(repository.full_name)
    try:
        if state.resumed:
            report.line(f"resuming: {len(state.issues)} issues already in {state.path}")
        if not state.listing_done:
            since = state.listed_since()
            resumed = f" (from {since:%Y-%m-%d %H:%M}, where it stopped)" if since else ""
            report.line(f"listing issues of {repository.full_name}{resumed}")
            # least recently updated first, each kept as listed: a listing cut short by a
            # failure goes on from its last update time instead of starting over
            with report.phase("listed").start(None) as listing:
                for issue in tracker.all_issues(since=since, sort="updated"):
                    state.add_listed(issue)
                    listing.advance()
            state.listing_complete()
        listed = sorted(state.listed.values(), key=lambda i: (i.created_at, i.number))
        todo = [i for i in listed if i.number not in state.issues]
        report.start(len(listed), len(listed) - len(todo))
        for issue in todo:
            state.add_issue(_with_history(tracker, issue, state, pattern))
            report.advance(issue.number)
        report.stop()
        issues = list(state.issues.values())
        fetch_context(
            tracker, state.context, state.add_context, issues, fixed_by=fixed_by, line=report.line
        )
    finally:
        report.stop()
        state.close()
    maintainers = sorted((u for u, r in state.roles.items() if r in TRIAGE_ROLES), key=str.lower)
    includes = state.context.includes(fixed_by)
    final = repository.model_copy(
        update={"fetched_at": state.fetched_at, "maintainers": maintainers, "includes": includes}
    )
    unknown = state.context.unknown  # what failed is left out whole: unknown, not partial
    issues = list(state.issues.values())
    if "fixed_by" not in unknown:
        issues = state.context.with_fixed_by(issues)
    extra = {
        "releases": [] if "releases" in unknown else state.context.releases,
        "discussions": [] if "discussions" in unknown else state.context.discussions.values(),
    }
    write_snapshot(out, final, issues, **extra)  # type: ignore[arg-type]
    if state.context.unknown:
        # Kept: the same command again fetches only the parts that failed.
        missing = ", ".join(sorted(state.context.unknown))
        log.warning(
            "%s: written without %s (unknown); run the same command again to fetch only what "
            "is missing (kept in %s)",
            out,
            missing,
            state.path,
        )
    else:
        state.path.unlink(missing_ok=True)
    report.line(f"wrote {out}: {len(issues)} issues and pull requests")
    return Snapshot(final, issues, path=out, **extra)  # type: ignore[arg-type]
