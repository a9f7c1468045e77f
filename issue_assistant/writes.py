"""The one door for writes: every write to a tracker goes through a `Writer`.

It performs a write in `live` mode, logs it in `dry-run` and skips it in `off`, and records
what it did (or would have done) for the run's report. A run's claim on an issue (the bot's 👀
while it writes, `live` mode only) goes through it too, but is no write the report lists. The
mode a run writes in: `resolve_writes`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from issue_assistant.errors import UserError
from issue_assistant.tracker.base import WritableTracker
from issue_assistant.tracker.models import Claim, Comment

if TYPE_CHECKING:
    from issue_assistant.config.sections import Config

log = logging.getLogger(__name__)

Mode = Literal["off", "dry-run", "live"]
MODES: tuple[Mode, ...] = ("off", "dry-run", "live")


def resolve_writes(explicit: str | None, config: Config, in_actions: bool) -> Mode:
    """The writes mode: explicit, else `approval.writes`, else live inside Actions only."""
    value = (explicit or "").strip().lower() or config.approval.writes
    if value is None:
        return "live" if in_actions else "dry-run"
    if value not in MODES:
        raise UserError(f"writes must be one of {', '.join(MODES)}, not {value!r}")
    return value  # type: ignore[return-value]


class Writer:
    """Performs writes in `live` mode, logs them in `dry-run`, skips them in `off`; records all."""

    def __init__(self, tracker: WritableTracker, mode: Mode) -> None:
        self.tracker = tracker
        self.mode = mode
        self.done: list[str] = []

    def _do(self, what: str, call: Callable[..., Any], *args: Any) -> Any:
        self.done.append(what)
        if self.mode == "live":
            log.info("%s", what)
            return call(*args)
        if self.mode == "dry-run":
            log.info("dry-run: would %s", what)
        return None

    def add_labels(self, number: int, labels: list[str]) -> None:
        names = ", ".join(repr(n) for n in labels)
        self._do(f"add labels {names} to #{number}", self.tracker.add_labels, number, labels)

    def remove_label(self, number: int, label: str) -> None:
        self._do(f"remove label {label!r} from #{number}", self.tracker.remove_label, number, label)

    def create_comment(self, number: int, body: str, what: str = "a comment") -> Comment | None:
        """The comment posted (None unless live)."""
        return self._do(f"post {what} on #{number}", self.tracker.create_comment, number, body)

    def edit_comment(self, comment_id: int, body: str, what: str = "the comment") -> None:
        self._do(f"edit {what} ({comment_id})", self.tracker.edit_comment, comment_id, body)

    def delete_comment(self, comment_id: int, what: str = "the comment") -> None:
        self._do(f"delete {what} ({comment_id})", self.tracker.delete_comment, comment_id)

    def close(self, number: int, reason: str) -> None:
        self._do(f"close #{number} as {reason}", self.tracker.close, number, reason)

    def withdraw_left_claim(self, comment_id: int, claim_id: int) -> None:
        """Withdraw a claim a failed run left on a comment (a write the report lists)."""
        what = f"withdraw a claim left on the comment ({comment_id})"
        self._do(what, self.tracker.release, comment_id, claim_id)

    def hold(self, comment_id: int) -> Claim:
        """This run's claim on the comment (live mode only: the caller claims only then)."""
        if self.mode != "live":
            raise ValueError(f"a claim is held only in live mode, not {self.mode}")
        return self.tracker.claim(comment_id)

    def let_go(self, comment_id: int, claim_id: int) -> None:
        """Withdraw a claim this run held, or one expired (a claim already gone is fine)."""
        if self.mode != "live":
            raise ValueError(f"a claim is held only in live mode, not {self.mode}")
        self.tracker.release(comment_id, claim_id)
