"""What the store keeps beside each saved label model, and the rule that says when it is stale.

Each saved model (`label-model.npz` beside the index, and up to `CACHED` models fit for earlier
moments in `label-models/`) has a small JSON file next to it: its cutoff, the creation time of
the newest issue it learned from, and how many labelled issues the index counted before its
cutoff when it was fit. The refit rule compares those with counts from the index
(`IssueIndex.count_labelled`: tantivy's postings, no stored issue read), so checking it costs the
same at 7k and 200k issues.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path

from issue_assistant.atomic import write_atomic
from issue_assistant.config.labels import LabelsConfig
from issue_assistant.index import IssueIndex

log = logging.getLogger(__name__)

CACHE_DIR = "label-models"
CACHED = 4  # models fit for moments before the main model's cutoff, least recently used dropped
REFIT_COUNT = 50
REFIT_SHARE = 0.10


def _time(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


@dataclass
class Saved:
    """A saved model's bookkeeping (the `.json` beside its `.npz`)."""

    path: Path  # the model's .npz
    fingerprint: str
    labels_key: str
    cutoff: datetime
    issues: int  # labelled issues it was fit on
    newest: datetime | None  # creation of the newest of them (None: not known)
    labelled_before: int  # the index's labelled issues created before the cutoff, at the fit
    indexed: int = 0  # the index's size at the fit

    @property
    def state_path(self) -> Path:
        return self.path.with_suffix(".json")

    def save(self) -> None:
        data = asdict(self)
        data.pop("path")
        data["cutoff"] = self.cutoff.isoformat()
        data["newest"] = self.newest.isoformat() if self.newest else None
        write_atomic(self.state_path, json.dumps(data, sort_keys=True), own=True)

    @classmethod
    def load(cls, path: Path) -> Saved | None:
        """The bookkeeping of the model at `path`, or None when missing or unreadable."""
        try:
            data = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
            return cls(
                path=path,
                fingerprint=str(data["fingerprint"]),
                labels_key=str(data["labels_key"]),
                cutoff=datetime.fromisoformat(data["cutoff"]),
                issues=int(data["issues"]),
                newest=_time(data.get("newest")),
                labelled_before=int(data["labelled_before"]),
                indexed=int(data.get("indexed", 0)),
            )
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def touch(self) -> None:
        """Mark as just used (the cache drops the least recently used)."""
        with contextlib.suppress(OSError):
            os.utime(self.state_path)

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)
        self.state_path.unlink(missing_ok=True)


def cache_path(directory: Path, cutoff: datetime) -> Path:
    """Where the model fit for `cutoff` is kept among the earlier moments."""
    return directory / CACHE_DIR / f"{cutoff.strftime('%Y%m%dT%H%M%S%f%z')}.npz"


def cached(directory: Path, labels_key: str) -> list[Saved]:
    """The models kept for earlier moments with this label set (their bookkeeping only)."""
    folder = directory / CACHE_DIR
    if not folder.is_dir():
        return []
    found = []
    for state in folder.glob("*.json"):
        saved = Saved.load(state.with_suffix(".npz"))
        if saved is not None and saved.labels_key == labels_key and saved.path.is_file():
            found.append(saved)
    return found


def trim_cache(directory: Path, keep: int = CACHED) -> None:
    """Drop the least recently used models beyond `keep` (any label set)."""
    folder = directory / CACHE_DIR
    if not folder.is_dir():
        return
    states = sorted(folder.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
    for state in states[keep:]:
        Saved(state.with_suffix(".npz"), "", "", datetime.min, 0, None, 0).remove()
        log.info("label model: dropped the one kept for %s (least recently used)", state.stem)


def stale(index: IssueIndex, labels: LabelsConfig, saved: Saved, moment: datetime) -> str | None:
    """Why `saved` (cutoff at or before `moment`) must be refit for `moment`, or None.

    Due when at least `REFIT_COUNT` (50) labelled issues, or `REFIT_SHARE` (10%) more than it was
    fit on, were created between its cutoff and the moment; or, once the index is complete (not
    during a live first build), when the index holds that many more labelled issues from before
    its cutoff than it did at the fit (the first build finished, history was added).
    """
    names = labels.all_names()
    bar = min(REFIT_COUNT, REFIT_SHARE * max(saved.issues, 1))
    new = index.count_labelled(names, since=saved.cutoff, before=moment)
    if new >= bar:
        return f"{new} labelled issues were created since its cutoff"
    if not index.building:
        grown = index.count_labelled(names, before=saved.cutoff) - saved.labelled_before
        if grown >= bar:
            return (
                f"the index now holds {grown} more labelled issues from before its cutoff than "
                "when it was fit"
            )
    return None


def describe_cutoff(moment: datetime) -> str:
    return f"{moment:%Y-%m-%d %H:%M} UTC"
