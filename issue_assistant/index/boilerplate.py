"""Lines that many of a repository's issues share: an unfilled template's, learned from the index.

Issue forms are stripped by their headings (`index.query.strip_template`), but many repositories
use Markdown templates whose lines (`- **Name:** *name of the dataset*`) reporters leave as they
are. Two reports that both left the template unfilled look alike to every similarity signal, so
the duplicate score reads the prose and signals without such lines.

A line is boilerplate once at least `MIN_ISSUES` issues, and at least `SHARE` of the issues
created so far, carried it; each line keeps the moment it became so, and a replay at an earlier
moment does not see it (no later issue changes an earlier answer). The list is kept beside the
index (`boilerplate.json`, hashes and times only) and rebuilt when the index grew by `REBUILD`.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from issue_assistant.atomic import write_atomic

log = logging.getLogger(__name__)

FILE = "boilerplate.json"
VERSION = 1
MIN_ISSUES = 10
SHARE = 0.01
REBUILD = 0.10
MAX_LINES = 80
MIN_CHARS = 8


def normalize(line: str) -> str | None:
    """The form two copies of a template line share, or None for a line too short to judge."""
    text = " ".join(line.lower().split())
    return text if len(text) >= MIN_CHARS else None


def key(norm: str) -> str:
    return hashlib.blake2b(norm.encode("utf-8"), digest_size=8).hexdigest()


@dataclass
class Boilerplate:
    """Hashes of common lines, each with the moment it became common."""

    common: dict[str, datetime] = field(default_factory=dict)
    indexed: int = 0

    def is_common(self, line: str, moment: datetime | None) -> bool:
        norm = normalize(line)
        if norm is None:
            return False
        since = self.common.get(key(norm))
        return since is not None and (moment is None or since < moment)

    def strip(self, text: str, moment: datetime | None) -> str:
        """`text` without the lines that were boilerplate before `moment`."""
        if not self.common or not text:
            return text
        return "\n".join(ln for ln in text.splitlines() if not self.is_common(ln, moment))

    @classmethod
    def build(cls, issues: Iterable[tuple[datetime, str]]) -> Boilerplate:
        """From (created_at, body) of every issue, oldest first or not."""
        counts: Counter[str] = Counter()
        common: dict[str, datetime] = {}
        seen = 0
        for created, body in sorted(issues, key=lambda cb: cb[0]):
            seen += 1
            lines = {n for ln in (body or "").splitlines()[:MAX_LINES] if (n := normalize(ln))}
            need = max(MIN_ISSUES, SHARE * seen)
            for norm in lines:
                k = key(norm)
                counts[k] += 1
                if k not in common and counts[k] >= need:
                    common[k] = created
        return cls(common=common, indexed=seen)

    def save(self, directory: Path) -> None:
        data = {
            "version": VERSION,
            "indexed": self.indexed,
            "common": {k: t.isoformat() for k, t in sorted(self.common.items())},
        }
        write_atomic(directory / FILE, json.dumps(data) + "\n", own=True)

    @classmethod
    def load(cls, directory: Path) -> Boilerplate | None:
        """The kept list, or None (rebuilt) when it is missing, of another version or not what
        `save` writes (any shape, type or range off: logged in one line)."""
        path = directory / FILE
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError, RecursionError) as exc:
            log.warning("index: %s cannot be read (%s); rebuilt", path, type(exc).__name__)
            return None
        try:
            if data.get("version") != VERSION:
                return None
            indexed, common = data["indexed"], data["common"]
            if isinstance(indexed, bool) or not isinstance(indexed, int) or indexed < 0:
                raise ValueError(f"indexed is {indexed!r}")
            if not isinstance(common, dict):
                raise ValueError("common is not an object")
            times = {str(k): _utc(datetime.fromisoformat(t)) for k, t in common.items()}
            return cls(common=times, indexed=indexed)
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            log.warning("index: %s is not valid (%s); rebuilt", path, exc)
            return None


def _utc(t: datetime) -> datetime:
    return t if t.tzinfo else t.replace(tzinfo=UTC)


def stale(found: Boilerplate | None, indexed: int) -> bool:
    """Rebuild when missing or when the index grew by `REBUILD` since it was built."""
    return found is None or indexed - found.indexed >= max(1, REBUILD * max(found.indexed, 1))
