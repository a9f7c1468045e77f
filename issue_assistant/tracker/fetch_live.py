"""Discussions for live runs, kept beside the index and fetched by what changed since the last run.

GraphQL lists discussions ordered by `updatedAt`, the most recent first. A run reads from the top
until it meets a discussion it already keeps with the same `updatedAt`: everything below it was
read by an earlier run. On a warm run that is one request. The first listing of a large
repository stops after `FIRST_PAGES` pages and leaves a cursor; each later run reads a few more
of the older pages from there (`TAIL_PAGES`) until it has them all.

A discussion deleted on GitHub stays here (the list is not read whole again).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from issue_assistant.atomic import write_atomic
from issue_assistant.tracker.github_context import discussion_updates
from issue_assistant.tracker.models import Discussion

if TYPE_CHECKING:
    from issue_assistant.tracker.client import GitHubClient

log = logging.getLogger(__name__)

STORE_FILE = "discussions.json"
STORE_VERSION = 1
HEAD_PAGE = 20  # a warm run: the 20 most recently updated, usually the only request
FULL_PAGE = 100
FIRST_PAGES = 10  # the first listing: 1,000 discussions, the most recently updated
TAIL_PAGES = 3  # then 300 older ones per run until the list is whole


@dataclass
class DiscussionStore:
    """The discussions kept for a repository: number to (`updatedAt`, discussion)."""

    path: Path | None = None
    known: dict[int, tuple[str, Discussion]] = field(default_factory=dict)
    tail: str | None = None  # where the first listing stopped (None: nothing older is missing)
    started: bool = False  # a first listing was made
    enabled: bool = True
    requests: int = 0

    @classmethod
    def load(cls, path: Path | None) -> DiscussionStore:
        """The store in `path` (none there, or unreadable: an empty one, refilled)."""
        store = cls(path)
        if path is None or not path.is_file():
            return store
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if data.get("version") != STORE_VERSION:
                raise ValueError(f"version {data.get('version')!r}")
            for item in data["discussions"]:
                d = Discussion.model_validate(item["discussion"])
                store.known[d.number] = (str(item["updated_at"]), d)
            store.tail = data.get("tail")
            store.started = bool(data.get("started"))
            store.enabled = bool(data.get("enabled", True))
        except (ValueError, KeyError, TypeError, ValidationError) as exc:
            log.warning("%s is unreadable (%s); the discussions are listed again", path, exc)
            return cls(path)
        return store

    def save(self) -> None:
        if self.path is None:
            return
        items = [
            {"updated_at": updated, "discussion": d.model_dump(mode="json")}
            for updated, d in sorted(self.known.values(), key=lambda v: v[1].number)
        ]
        data = {
            "version": STORE_VERSION,
            "started": self.started,
            "tail": self.tail,
            "enabled": self.enabled,
            "discussions": items,
        }
        write_atomic(
            self.path, json.dumps(data, ensure_ascii=False, separators=(",", ":")), own=True
        )

    def discussions(self) -> list[Discussion]:
        """Every discussion kept, oldest first ([] where discussions are off)."""
        if not self.enabled:
            return []
        return sorted((d for _, d in self.known.values()), key=lambda d: (d.created_at, d.number))

    def _page(self, tracker: GitHubClient, first: int, after: str | None) -> Any:
        self.requests += 1
        page = discussion_updates(tracker, first, after)
        self.enabled = page.enabled
        return page

    def sync(self, tracker: GitHubClient) -> int:
        """Fetch what changed since the last sync; the number of discussions read.

        Raises `GitHubError` (no access, GraphQL refused) and leaves the store as it was."""
        read = 0
        first_listing = not self.started
        pages = FIRST_PAGES if first_listing else FIRST_PAGES + TAIL_PAGES
        size = FULL_PAGE if first_listing else HEAD_PAGE
        after: str | None = None
        found: dict[int, tuple[str, Discussion]] = {}
        cut_short = False
        for n in range(pages):
            page = self._page(tracker, size, after)
            if not page.enabled:
                return 0
            seen_before = False
            for updated, d in page.discussions:
                old = self.known.get(d.number)
                if old is not None and old[0] == updated:
                    seen_before = True
                    break
                found.setdefault(d.number, (updated, d))
            read += len(page.discussions)
            if seen_before or page.last:
                break
            after, size = page.cursor, FULL_PAGE
            cut_short = n == pages - 1
        if first_listing:
            self.tail = after if cut_short else None
        elif cut_short:
            log.warning("more than %d discussions changed since the last run: some missed", read)
        tail, done = self.tail, 0
        while tail is not None and done < TAIL_PAGES and not first_listing:
            page = self._page(tracker, FULL_PAGE, tail)
            done += 1
            for updated, d in page.discussions:
                if d.number not in found and d.number not in self.known:
                    found[d.number] = (updated, d)
            read += len(page.discussions)
            tail = None if page.last else page.cursor
        if not first_listing:
            self.tail = tail
        self.known.update(found)
        self.started = True
        return read
