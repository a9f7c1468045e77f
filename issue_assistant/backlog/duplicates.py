"""`backlog --duplicates`: the groups report, live or from a snapshot, and `--post`.

The report lists each group with its proposed original, the evidence and links; nothing is
closed. With `--post`, each newer issue of a group gets one pending comment through the live
path (the same skips, claim, pending label, approval), within the run's bounds (`--limit`,
`[backlog] per_day`, the hourly budget) and kept in the same state as the triage run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from issue_assistant.backlog.groups import Group, GroupProposal, find_groups
from issue_assistant.backlog.report import issue_link, server_url
from issue_assistant.backlog.run import BacklogRun, Runner, backlog_lock
from issue_assistant.backlog.selection import Recheck
from issue_assistant.backlog.state import STATE_FILE, BacklogState
from issue_assistant.config.labels import LabelsConfig
from issue_assistant.config.sections import Config
from issue_assistant.learn.learned import Beside
from issue_assistant.moment import Moment, open_moment
from issue_assistant.render import render
from issue_assistant.tracker.base import WritableTracker
from issue_assistant.writes import Mode


@dataclass
class DuplicatesResult:
    repository: str
    moment: datetime
    open_issues: int
    groups: list[Group]
    original: str = "oldest"
    markdown: str = ""
    run: BacklogRun | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def outputs(self) -> dict[str, Any]:
        posted = self.run.proposed if self.run is not None else []
        return {
            "repository": self.repository,
            "moment": self.moment.isoformat(),
            "open_issues": self.open_issues,
            "groups": [
                {
                    "original": g.original.number,
                    "members": [m.number for m in g.members],
                    "links": [
                        {"issue": lk.newer, "like": lk.older, "score": lk.score} for lk in g.links
                    ],
                }
                for g in self.groups
            ],
            "proposed": [i.number for i in posted],
            "stopped": self.run.stopped if self.run is not None else None,
        }


def render_groups(result: DuplicatesResult, api_url: str = "https://api.github.com") -> str:
    base = server_url(api_url)
    return render(
        "backlog_duplicates.md.j2",
        result=result,
        run=result.run,
        link=lambda n: issue_link(base, result.repository, n),
    )


def duplicates_offline(
    snapshot: str | Path,
    labels: LabelsConfig,
    config: Config,
    cache_dir: str | Path,
    as_of: datetime | None = None,
) -> DuplicatesResult:
    """The groups among a snapshot's issues open at `as_of` (default: when it was fetched)."""
    from issue_assistant.index.local import open_index
    from issue_assistant.tracker.asof import AsOfView
    from issue_assistant.tracker.snapshot import read_snapshot

    snap = read_snapshot(snapshot)
    moment = as_of or snap.repository.fetched_at
    index = open_index(snap, cache_dir, vectors=config.index.vectors)
    view = AsOfView(snap, moment)
    opened = [i for i in view.all_issues() if i.state == "open" and not i.is_pull_request]
    at = Moment(view, index, labels, Beside(), as_of=moment)
    groups = find_groups(at, config, opened, moment)
    result = DuplicatesResult(
        snap.repository.full_name, moment, len(opened), groups, config.backlog.original
    )
    result.markdown = render_groups(result)
    return result


def duplicates_live(
    tracker: WritableTracker,
    labels: LabelsConfig,
    config: Config,
    *,
    writes: Mode,
    post: bool = False,
    limit: int | None = None,
    now: datetime | None = None,
    cache_dir: str | Path | None = None,
    api_url: str = "https://api.github.com",
) -> DuplicatesResult:
    """The groups among the open issues now (from the index, refreshed once); with `post`, the
    proposals on each group's newer issues."""
    from issue_assistant.settings import current
    from issue_assistant.sync import CachedReads, refresh_index

    now = now or datetime.now(UTC)
    cache = current().cache_root(config.index.cache_dir, str(cache_dir) if cache_dir else None)
    margin = config.backlog.rate_margin  # the run's own margin, not the Action's
    index = refresh_index(tracker, cache, now, config.index.vectors, margin=margin)
    view = CachedReads(tracker, index)
    opened = [i for i in index.all_stored() if i.state == "open" and not i.is_pull_request]
    groups = find_groups(Moment(view, index, labels, Beside(), as_of=now), config, opened, now)
    full_name = tracker.repository.full_name
    result = DuplicatesResult(full_name, now, len(opened), groups, config.backlog.original)
    if post:
        with backlog_lock(cache, full_name):
            moment = open_moment(tracker, index, labels, config, Beside(), as_of=now, live=tracker)
            result.run = _post(labels, config, writes, limit, now, moment, groups)
    result.markdown = render_groups(result, api_url)
    return result


def _post(
    labels: LabelsConfig,
    config: Config,
    writes: Mode,
    limit: int | None,
    now: datetime,
    moment: Moment,
    groups: list[Group],
) -> BacklogRun:
    """The proposals on each group's newer issues, through the backlog's walk on `moment`
    (the repository now, with the tracker on GitHub)."""
    live = moment.on_github()
    state_path = moment.index.path / STATE_FILE
    state = BacklogState.load(state_path, now.date())
    run = BacklogRun(
        repository=moment.repository,
        writes=writes,
        limit=limit if limit is not None else config.backlog.limit,
        per_day=config.backlog.per_day,
        groups=["duplicates"],
    )
    recheck = Recheck(labels, config, live.repository, [], now, state.started())
    tasks = []
    for group in groups:
        for issue in group.newer:
            if state.outcome(issue.number, now) is None:
                proposal = GroupProposal(config, labels, group, issue.number, live)
                tasks.append((issue, [], (proposal, None)))
    run.selected = len(tasks)
    runner = Runner(
        labels, config, writes, now, moment, state, state_path, (None, None), run, recheck
    )  # type: ignore[arg-type]
    runner.walk(tasks)  # type: ignore[arg-type]
    run.posted_today = state.posted_on(now.date(), config.backlog.per_day)
    return run
