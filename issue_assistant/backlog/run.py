"""One backlog run: the selected issues analyzed as of now and proposed through the live path.

Each issue goes through `live.analyze_live` (the same skips, engine and fallback, comment, pending
label and reliability rules as a new issue), with the index refreshed once for the run, the
engines made once, the backlog's own skip rules (`selection.Recheck`) on the issue's fresh
record, and the discussion so far as evidence. A run stops at `--limit` proposals, at
`[backlog] per_day` comments posted in the UTC day, or before the token's hourly limit
(`X-RateLimit-Remaining` under `[backlog] rate_margin` plus one issue's requests), and says
when it will go on; the next run takes up the selection where this one stopped.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from issue_assistant.backlog.selection import Recheck, Skipped, checked_groups, select
from issue_assistant.backlog.selection import with_discussion as discussion_of
from issue_assistant.backlog.state import STARTED, STATE_FILE, BacklogState, Done
from issue_assistant.cachelock import holding
from issue_assistant.comment import Plan
from issue_assistant.config.labels import LabelsConfig
from issue_assistant.config.sections import Config
from issue_assistant.engines import Engine
from issue_assistant.errors import GitHubError, IssueGone
from issue_assistant.index.local import index_path
from issue_assistant.learn.learned import Beside
from issue_assistant.live import LiveResult, analyze_live
from issue_assistant.moment import Moment, open_moment
from issue_assistant.pipeline import check_engines, engines_for
from issue_assistant.progress import Progress
from issue_assistant.settings import current
from issue_assistant.sync import refresh_index
from issue_assistant.tracker.base import WritableTracker
from issue_assistant.tracker.models import Issue
from issue_assistant.writes import Mode

log = logging.getLogger(__name__)

# Requests one issue costs at most on the live path (the issue, its comments, the check after
# posting, the comment, the pending label, votes on an edit): the run stops before it would
# leave fewer than `[backlog] rate_margin`.
ISSUE_REQUESTS = 8
# Rules found on GitHub that keep an issue out of later runs (with `until` for an answer).
KEPT_RULES = ("assistant", "answered", "locked")
# One issue to propose for: the groups it lacks, and the engines (None: the run's own).
Task = tuple[Issue, list[str], "tuple[Engine, Engine | None] | None"]


@dataclass
class Item:
    """One issue this run looked at on GitHub: what it proposed (or would), or why not."""

    number: int
    title: str
    action: str  # posted, would post, edited, unchanged, skipped, failed
    missing: list[str] = field(default_factory=list)
    reason: str = ""
    rule: str = ""
    comment: str = ""
    comment_url: str | None = None
    plan: Plan | None = None
    error: str | None = None  # the engine's failure, when the fallback answered

    @property
    def proposed(self) -> bool:
        return self.action in ("posted", "would post")


@dataclass
class BacklogRun:
    """What one run did, for the summary, the report and the outputs."""

    repository: str
    writes: Mode
    limit: int
    per_day: int
    groups: list[str]
    selected: int = 0
    items: list[Item] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    stopped: str | None = None
    left: int = 0  # selected issues not reached this run
    posted_today: int = 0

    @property
    def proposed(self) -> list[Item]:
        return [i for i in self.items if i.proposed]

    @property
    def failed(self) -> list[Item]:
        return [i for i in self.items if i.action == "failed"]


def _rate(tracker: WritableTracker) -> tuple[int | None, datetime | None]:
    """Requests left this hour and when the limit resets, as GitHub's last answer said."""
    return tracker.rate_remaining(), tracker.rate_reset()


def budget_line(left: int | None, margin: int, reset: datetime | None, nxt: int) -> str:
    """Why the run stopped before the hourly limit, and when it will go on."""
    when = f"the limit resets at {reset:%H:%M} UTC" if reset else "the limit resets within the hour"
    count = f"{left} requests left" if left is not None else "GitHub's rate limit was reached"
    return (
        f"stopped before GitHub's hourly limit ({count}, [backlog] rate_margin = {margin}); "
        f"{when}, and the next run after that goes on from #{nxt}"
    )


def _limited(exc: GitHubError) -> bool:
    return exc.status in (403, 429) and "rate limit" in exc.message.lower()


@dataclass
class Runner:
    """Walks the selection for one run (kept small: each issue is `analyze_live`)."""

    labels: LabelsConfig
    config: Config
    writes: Mode
    now: datetime
    # the repository now, built once for the run (its index refreshed), with the tracker on
    # GitHub (`Moment.live`): its rate budget, the issues' reads and the writes
    moment: Moment
    state: BacklogState
    state_path: Path
    engines: tuple[Engine, Engine | None]
    run: BacklogRun
    recheck: Recheck
    progress: Progress | None = None

    def stop_reason(self, nxt: int, proposed: int) -> str | None:
        cfg = self.config.backlog
        if proposed >= self.run.limit:
            return f"--limit {self.run.limit} reached; the next run goes on from #{nxt}"
        today = self.now.date()
        if self.writes == "live" and self.state.posted_on(today, cfg.per_day) >= cfg.per_day:
            tomorrow = datetime.combine(today + timedelta(days=1), datetime.min.time(), UTC)
            return (
                f"[backlog] per_day = {cfg.per_day} comments reached today; a run after "
                f"{tomorrow:%Y-%m-%d %H:%M} UTC goes on from #{nxt}"
            )
        left, reset = _rate(self.moment.on_github())
        if left is not None and left < cfg.rate_margin + ISSUE_REQUESTS:
            return budget_line(left, cfg.rate_margin, reset, nxt)
        return None

    def one(
        self, issue: Issue, missing: list[str], engines: tuple[Engine, Engine | None] | None
    ) -> Item:
        bot = self.config.approval.bot_login
        triage = engines is None
        if self.writes == "live":
            # Kept before the first write: a run stopped between the comment and the pending
            # label is finished by the next one instead of being skipped for its comment.
            begun = Done(rule=STARTED, reason="proposal being written", at=self.now)
            self.state.record(issue.number, begun)
            self.state.save(self.state_path, self.now.date())
        result: LiveResult = analyze_live(
            self.run.repository,
            issue.number,
            labels=self.labels,
            config=self.config,
            engine_name=None,
            writes=self.writes,
            now=self.now,
            moment=self.moment,
            skip=self.recheck,
            evidence=(lambda i, comments: discussion_of(i, comments, bot)) if triage else None,
            engines=engines or self.engines,
        )
        item = Item(issue.number, issue.title, result.action, missing)
        if result.skipped:
            item.action, item.reason = "skipped", result.skipped
            self.state.issues.pop(issue.number, None)  # nothing was written
            self._kept(item, issue.number, result.skipped)
            return item
        item.comment, item.comment_url, item.plan = result.comment, result.comment_url, result.plan
        item.error = result.error
        if result.action in ("posted", "edited", "unchanged"):
            reason = f"proposed on {self.now:%Y-%m-%d}"
            done = Done(rule="proposed", reason=reason, at=self.now)
            self.state.record(issue.number, done, posted=result.action == "posted")
        else:
            self.state.issues.pop(issue.number, None)
        return item

    def _kept(self, item: Item, number: int, reason: str) -> None:
        """Keep a skip for later runs: the backlog's own rules as they say; the live path's
        (nothing to propose, votes already there, another run first) for `answered_days`, so
        an issue the engine abstains on does not head every run."""
        found = self.recheck.found.get(number)
        if found is not None:
            skip, until = found
            item.rule = skip.rule
            if skip.rule in KEPT_RULES:
                self.state.record(
                    number, Done(rule=skip.rule, reason=skip.reason, at=self.now, until=until)
                )
            return
        item.rule = "not proposed"
        until = self.now + timedelta(days=max(self.config.backlog.answered_days, 1))
        self.state.record(number, Done(rule=item.rule, reason=reason, at=self.now, until=until))

    def walk(self, todo: list[Task]) -> None:
        """Each task in order until a bound stops the run (the rest is for the next run)."""
        proposed = 0
        for position, (issue, missing, engines) in enumerate(todo):
            reason = self.stop_reason(issue.number, proposed)
            if reason is not None:
                self.run.stopped, self.run.left = reason, len(todo) - position
                log.info("backlog: %s", reason)
                return
            try:
                item = self.one(issue, missing, engines)
            except GitHubError as exc:
                if _limited(exc):
                    left, reset = _rate(self.moment.on_github())
                    self.run.stopped = budget_line(
                        left, self.config.backlog.rate_margin, reset, issue.number
                    )
                    self.run.left = len(todo) - position
                    log.warning("backlog: #%d: %s; %s", issue.number, exc, self.run.stopped)
                    return
                log.error("backlog: #%d: %s; the next run tries it again", issue.number, exc)
                item = Item(issue.number, issue.title, "failed", reason=str(exc))
            except IssueGone as exc:  # deleted or transferred: the index forgot it
                log.warning("backlog: #%d skipped: %s", issue.number, exc.reason)
                self.state.issues.pop(issue.number, None)
                item = Item(issue.number, issue.title, "skipped", reason=exc.reason, rule="gone")
            except Exception as exc:  # noqa: BLE001 - one issue never stops the sweep
                what = f"{type(exc).__name__}: {exc}"[:300]
                log.error(
                    "backlog: #%d failed (%s); the next run tries it again", issue.number, what
                )
                item = Item(issue.number, issue.title, "failed", reason=what)
            finally:
                if self.writes == "live":  # a dry run leaves nothing a later run would read
                    self.state.save(self.state_path, self.now.date())
            self.run.items.append(item)
            proposed += item.proposed
            if self.progress is not None:
                self.progress.advance(note=f"#{issue.number} {item.action}")


def run_backlog(
    tracker: WritableTracker,
    labels: LabelsConfig,
    config: Config,
    *,
    writes: Mode,
    limit: int | None = None,
    order: str | None = None,
    engine_name: str | None = None,
    now: datetime | None = None,
    cache_dir: str | Path | None = None,
    engines: Callable[[], tuple[Engine, Engine | None]] | None = None,
) -> BacklogRun:
    """Triage the open issues nobody labelled: at most `limit` proposals this run."""
    now = now or datetime.now(UTC)
    cache = current().cache_root(config.index.cache_dir, str(cache_dir) if cache_dir else None)
    with backlog_lock(cache, tracker.repository.full_name):
        return _run(tracker, labels, config, writes, limit, order, engine_name, now, cache, engines)


def backlog_lock(cache: Path, full_name: str) -> AbstractContextManager[None]:
    """One backlog run at a time per cache (its state file); the index has its own lock, so
    the runs on new issues are not held up by a sweep."""
    folder = index_path(cache, full_name)
    return holding(folder.with_name(folder.name + "-backlog"))


def _run(
    tracker: WritableTracker,
    labels: LabelsConfig,
    config: Config,
    writes: Mode,
    limit: int | None,
    order: str | None,
    engine_name: str | None,
    now: datetime,
    cache: Path,
    engines: Callable[[], tuple[Engine, Engine | None]] | None,
) -> BacklogRun:
    groups = checked_groups(labels, config)
    margin = config.backlog.rate_margin  # the run's own margin, not the Action's
    index = refresh_index(tracker, cache, now, config.index.vectors, margin=margin)
    state_path = index.path / STATE_FILE
    state = BacklogState.load(state_path, now.date())
    selection = select(index.all_stored(), labels, config, state, now, order)
    groups = selection.groups
    pair = engines() if engines is not None else engines_for(config, labels, engine_name)
    check_engines(*pair)
    run = BacklogRun(
        repository=tracker.repository.full_name,
        writes=writes,
        limit=limit if limit is not None else config.backlog.limit,
        per_day=config.backlog.per_day,
        groups=list(groups),
        selected=len(selection.todo),
        skipped=selection.skipped,
    )
    recheck = Recheck(labels, config, tracker.repository, groups, now, state.started())
    moment = open_moment(tracker, index, labels, config, Beside(), as_of=now, live=tracker)
    runner = Runner(labels, config, writes, now, moment, state, state_path, pair, run, recheck)
    with Progress("backlog").start(len(selection.todo)) as progress:
        runner.progress = progress
        runner.walk([(i, selection.missing.get(i.number, []), None) for i in selection.todo])
    run.posted_today = state.posted_on(now.date(), config.backlog.per_day)
    log.info(
        "backlog: %d selected, %d proposed, %d skipped here (%d by the selection)%s",
        run.selected,
        len(run.proposed),
        sum(1 for i in run.items if i.action == "skipped"),
        len(run.skipped),
        f"; {run.stopped}" if run.stopped else "",
    )
    return run
