"""The live index sync: the on-disk issue index brought up to date from GitHub (only what changed
since the last run, a full listing now and then, what is gone forgotten), its progress while a
first build spans runs, and the reads a run makes through it.

It takes the tracker on GitHub itself, not a moment: it builds the index a moment holds, so it
runs before there is one (`moment`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

from issue_assistant.atomic import write_atomic
from issue_assistant.cachelock import holding
from issue_assistant.comment import IndexProgress
from issue_assistant.config.sections import VectorKind
from issue_assistant.errors import GitHubError
from issue_assistant.index import IssueIndex
from issue_assistant.index.local import index_path
from issue_assistant.progress import Progress
from issue_assistant.tracker.base import WritableTracker
from issue_assistant.tracker.models import Discussion, Issue, Release, Repository

log = logging.getLogger(__name__)

SYNC_FILE = "synced_at"
DISCUSSIONS_FILE = "discussions.json"  # kept by the tracker: only what changed is fetched
SYNC_MARGIN = timedelta(minutes=10)
CURSOR_FILE = "listing-cursor"
# A full listing (every issue, not only those updated since the last run) at most this often:
# the indexed issues it does not list were deleted or transferred, and are removed. It costs
# one request per 100 issues, and is made only for indexes of at most `LIST_BUDGET` issues
# (larger ones forget an issue when a run finds it gone).
FULL_FILE = "listed-all-at"
FULL_EVERY = timedelta(days=1)
LIST_CHUNK = 1000
# Issues one run lists at most: 300 requests of 100, under a third of GITHUB_TOKEN's hourly 1,000.
LIST_BUDGET = 30_000
# Requests a run leaves unspent this hour (`X-RateLimit-Remaining`): enough for its comment and
# for the other runs of the hour (a warm run makes about 8).
RATE_MARGIN = 100
EMBED_BUDGET_S = 120.0
# The issues of a run kept for their vectors; a longer listing looks for what lacks one in the
# whole index instead.
FRESH_KEPT = 1000


def _rate_left(tracker: WritableTracker) -> int | None:
    """Requests left this hour as the last answer said (`X-RateLimit-Remaining`), or None."""
    return tracker.rate_remaining()


def _may_stop(exc: GitHubError) -> bool:
    """A listing error after which the run goes on with what is indexed (a rate limit, no
    answer, a server error); anything else (a refused token, say) stops the run."""
    return exc.status is None or exc.status in (403, 429) or exc.status >= 500


def refresh_index(
    tracker: WritableTracker,
    cache_dir: str | Path,
    now: datetime,
    vectors: VectorKind = "off",
    *,
    margin: int | None = None,
) -> IssueIndex:
    """The on-disk index brought up to date; only issues updated since the last run if possible.

    The listing goes least recently updated first, in chunks of `LIST_CHUNK`, each committed
    with the point to resume from (`CURSOR_FILE`), so a large repository's first build spans
    runs: a run stops after `LIST_BUDGET` issues, when fewer than `margin` (default
    `RATE_MARGIN`) requests are left this hour, or on a rate limit or server error, and the next
    run goes on from the last chunk committed. While no listing has completed yet the index is
    marked as building.

    With `vectors`, those missing from the index are computed for at most
    `EMBED_BUDGET_S` seconds per run (newest first), so a large repository's first build is
    spread over runs. Both show their progress (`issue_assistant.progress`)."""
    path = index_path(cache_dir, tracker.repository.full_name)
    with holding(path):  # one writer per cache: a second run waits, then says so
        return _refresh(tracker, path, now, vectors, margin)


def _refresh(
    tracker: WritableTracker, path: Path, now: datetime, vectors: VectorKind, margin: int | None
) -> IssueIndex:
    index = IssueIndex(path)
    tracker.keep_discussions(path / DISCUSSIONS_FILE)
    index.enable_vectors(vectors)
    stamp = path / SYNC_FILE
    cursor = path / CURSOR_FILE
    since: datetime | None = None
    try:
        if cursor.is_file():
            since = datetime.fromisoformat(cursor.read_text().strip())
        elif len(index) and stamp.is_file():
            since = datetime.fromisoformat(stamp.read_text().strip())
    except ValueError:
        since = None
    full_due = since is not None and not cursor.is_file() and len(index) <= LIST_BUDGET
    if full_due and _since_full(path / FULL_FILE, now):
        since = None  # a full listing this run: what it does not list is gone
    full = since is None and not cursor.is_file()
    first_build = not stamp.is_file()  # a first listing, maybe spanning runs: a full one too
    seen: set[int] = set()
    written = listed = 0
    last: datetime | None = None
    complete = False
    chunk: list[Issue] = []
    fresh: list[Issue] = []  # this run's issues while few (`FRESH_KEPT`): their vectors

    def commit() -> None:
        nonlocal written, last, chunk
        if not chunk:
            return
        written += index.update(chunk)
        newest = max(i.updated_at or i.created_at for i in chunk)
        last = newest if last is None else max(last, newest)
        write_atomic(cursor, last.isoformat(), own=True)  # the resume point, after every chunk
        chunk = []

    margin = RATE_MARGIN if margin is None else margin
    left = _rate_left(tracker)
    shown = Progress("index")  # total unknown: only what changed is listed
    try:
        if left is not None and left < margin:
            log.warning(
                "index: %d requests left this hour (margin %d): not listing this run",
                left,
                margin,
            )
        else:
            listing = iter(tracker.all_issues(since=since, sort="updated"))
            shown.start(None)
            for issue in listing:
                chunk.append(issue)
                if len(fresh) < FRESH_KEPT:
                    fresh.append(issue)
                seen.add(issue.number)
                listed += 1
                shown.advance(note="listed")
                if len(chunk) >= LIST_CHUNK:
                    commit()
                if listed >= LIST_BUDGET:
                    complete = next(listing, None) is None
                    break
                left = _rate_left(tracker)
                if left is not None and left < margin:
                    log.warning(
                        "index: listing stopped with %d requests left this hour (margin %d)",
                        left,
                        margin,
                    )
                    break
            else:
                complete = True
    except GitHubError as exc:
        if not _may_stop(exc):
            raise
        log.warning("index: listing stopped (%s); going on with what is indexed", exc)
    finally:
        shown.stop()
    commit()
    if complete:
        write_atomic(stamp, (now - SYNC_MARGIN).isoformat(), own=True)
        cursor.unlink(missing_ok=True)
        if full:
            gone = index.remove(index.numbers() - seen)
            if gone:
                log.info("index: %d issues no longer listed (deleted or transferred) removed", gone)
        if full or first_build:
            write_atomic(path / FULL_FILE, now.isoformat(), own=True)
    elif listed or cursor.is_file():
        log.info("index: listing stopped after %d issues; the next run goes on from there", listed)
    index.mark_building(not stamp.is_file())
    log.info("index: %d issues added or changed (%d in all)", written, len(index))
    if index.vectors is not None:
        with Progress("vectors") as shown:  # may stop on its time budget, before the end
            embedded = index.embed_changed(
                fresh,
                complete=listed == len(fresh),
                budget_s=EMBED_BUDGET_S,
                progress=shown.report,
            )
        if embedded:
            log.info("index: %d issue vectors computed (%d in all)", embedded, len(index.vectors))
    return index


def _since_full(stamp: Path, now: datetime) -> bool:
    """Whether the last full listing is older than `FULL_EVERY` (or unknown)."""
    try:
        last = datetime.fromisoformat(stamp.read_text().strip())
    except (OSError, ValueError):
        return True
    return last.tzinfo is None or now - last >= FULL_EVERY


def index_progress(index: IssueIndex, number: int) -> IndexProgress | None:
    """How much of the tracker a building index holds (the highest number known, the issue's
    or an indexed one, estimates the issues and pull requests there are), or None once the
    index is complete."""
    if not index.building:
        return None
    about = max(number, index.highest_number(), len(index))
    return IndexProgress(searched=len(index), of_about=about)


class CachedReads:
    """A read-only `Tracker` over another that fetches each issue once per run; issues the
    index holds (refreshed at the start of the run) are read from it, not from GitHub."""

    def __init__(self, tracker: WritableTracker, index: IssueIndex | None = None) -> None:
        self._tracker = tracker
        self._index = index
        self._issues: dict[int, Issue] = {}

    @property
    def repository(self) -> Repository:
        return self._tracker.repository

    def get_issue(self, number: int) -> Issue:
        if number not in self._issues:
            stored = self._index.stored(number) if self._index is not None else None
            self._issues[number] = stored or self._tracker.get_issue(number)
        return self._issues[number]

    def all_issues(self) -> Iterator[Issue]:
        return iter(self._tracker.all_issues())

    def releases(self) -> list[Release] | None:
        return self._tracker.releases()

    def discussions(self) -> list[Discussion] | None:
        return self._tracker.discussions()

    @property
    def point_in_time(self) -> None:
        return None
