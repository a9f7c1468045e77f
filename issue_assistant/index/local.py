"""Where a repository's index lives in the cache, and opening it up to date with a tracker.

Kept apart from `pipeline` so that `search` and `index` need not import the engines, the context
and the comment renderer to open an index.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import TYPE_CHECKING

from issue_assistant.cachelock import holding
from issue_assistant.index.search import IssueIndex
from issue_assistant.progress import callback, counted

if TYPE_CHECKING:
    from issue_assistant.config.sections import VectorKind
    from issue_assistant.tracker.base import Tracker

log = logging.getLogger("issue_assistant.pipeline")


def index_path(cache_dir: str | Path, full_name: str) -> Path:
    return Path(cache_dir) / "index" / re.sub(r"[^A-Za-z0-9_.-]", "__", full_name)


def open_index(
    tracker: Tracker, cache_dir: str | Path, *, vectors: VectorKind = "off"
) -> IssueIndex:
    """The repository's index on disk, brought up to date with the tracker, and its `vectors`
    (sentence embeddings are slow the first time on a large repository)."""
    path = index_path(cache_dir, tracker.repository.full_name)
    with holding(path):  # one writer per cache: a second run waits, then says so
        index = IssueIndex(path)
        index.enable_vectors(vectors)
        issues = list(tracker.all_issues())
        written = index.update(counted(issues, "index", total=len(issues)), whole=True)
        if written:
            log.info("index: %d issues added or changed (%d in all)", written, len(index))
        if index.vectors is not None:
            embedded = index.embed(issues, progress=callback("vectors"))
            if embedded:
                log.info("index: %d issue vectors computed", embedded)
    return index
