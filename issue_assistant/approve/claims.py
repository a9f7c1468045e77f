"""A run's claim on the assistant's comment: the bot's 👀, held while the run writes to the issue,
so that two runs never write to one issue at once. One left by a killed run expires."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from issue_assistant.tracker.base import WritableTracker
from issue_assistant.writes import Mode, Writer

log = logging.getLogger(__name__)

# A run at work on an issue holds the bot's 👀 on the comment; one left by a killed run expires.
CLAIM_EXPIRES = timedelta(minutes=20)


class Claims:
    """This run's claims, one held at a time (`held`: the comment's id and the claim's)."""

    def __init__(self, tracker: WritableTracker, writes: Mode, now: datetime) -> None:
        self.now = now
        self.held: tuple[int, int] | None = None  # (comment id, claim id) while writing
        self._writer = Writer(tracker, writes)  # this run's claims, no write it reports

    def take(self, comment_id: int) -> int | None:
        """The id of this run's claim on the comment, or None when another run holds it."""
        claim = self._writer.hold(comment_id)
        if claim.new:
            return claim.id
        if claim.created_at is not None and self.now - claim.created_at < CLAIM_EXPIRES:
            return None
        log.info("withdrawing a claim left since %s", claim.created_at)
        self._writer.let_go(comment_id, claim.id)
        again = self._writer.hold(comment_id)
        return again.id if again.new else None

    def withdraw(self) -> None:
        """Withdraw this run's claim (once: `held` is cleared first)."""
        if self.held is not None:
            comment_id, claim_id = self.held
            self.held = None
            self._writer.let_go(comment_id, claim_id)
