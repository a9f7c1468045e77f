"""What earlier backlog runs did, kept beside the index (`backlog.json`), so a run resumes.

Per issue the outcome that keeps it out of the next selection (proposed, or skipped until a
date), and per UTC day the pending comments posted (`[backlog] per_day`). GitHub stays the
authority: an issue whose comment is there is skipped whatever this file says, so a lost file
never makes a second comment. An unreadable file is set aside with a warning and counts as the
day's comments all posted (the day's bound holds); the next day starts afresh.
"""

from __future__ import annotations

import logging
import shutil
from datetime import date, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from issue_assistant.atomic import write_atomic

log = logging.getLogger(__name__)

STATE_FILE = "backlog.json"
KEPT_DAYS = 14  # the per-day counts kept
STARTED = "started"  # a proposal being written: its comment may be there without its label


class Done(BaseModel):
    """An issue's outcome in an earlier run; `until`: when it is looked at again."""

    model_config = ConfigDict(extra="forbid")

    rule: str
    reason: str
    at: datetime
    until: datetime | None = None


class BacklogState(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: Literal[1] = 1
    posted: dict[date, int] = Field(default_factory=dict)
    issues: dict[int, Done] = Field(default_factory=dict)
    # Set when the file could not be read: that day's comments count as all posted.
    spent: date | None = None

    @classmethod
    def load(cls, path: Path, today: date) -> BacklogState:
        if not path.exists() and not path.is_symlink():
            return cls()
        try:
            if not path.is_file():
                raise OSError("not a file")
            return cls.model_validate_json(path.read_bytes())
        except (OSError, ValueError, ValidationError, RecursionError) as exc:
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            log.warning(
                "backlog: %s is unreadable (%s): set aside; no comment is posted today, so "
                "[backlog] per_day holds",
                path,
                first,
            )
            aside = path.with_name(path.name + ".unreadable")
            if aside.is_dir() and not aside.is_symlink():
                shutil.rmtree(aside, ignore_errors=True)
            else:
                aside.unlink(missing_ok=True)
            path.replace(aside)
            return cls(spent=today)

    def save(self, path: Path, today: date) -> None:
        keep = sorted(self.posted)[-KEPT_DAYS:]
        self.posted = {d: self.posted[d] for d in keep}
        write_atomic(path, self.model_dump_json(indent=1) + "\n", own=True)

    def outcome(self, number: int, now: datetime) -> Done | None:
        """The earlier outcome that still keeps `number` out, or None (also for a proposal
        an earlier run started and did not finish)."""
        done = self.issues.get(number)
        if done is None or done.rule == STARTED or (done.until is not None and done.until <= now):
            return None
        return done

    def started(self) -> set[int]:
        """The issues whose proposal an earlier run began writing and did not finish."""
        return {n for n, d in self.issues.items() if d.rule == STARTED}

    def posted_on(self, day: date, per_day: int) -> int:
        """Comments posted on `day` (all of them, `per_day`, when the file was unreadable)."""
        return per_day if self.spent == day else self.posted.get(day, 0)

    def record(self, number: int, done: Done, posted: bool = False) -> None:
        self.issues[number] = done
        if posted:
            day = done.at.date()
            self.posted[day] = self.posted.get(day, 0) + 1
