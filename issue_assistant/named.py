"""The issues a proposal names, confirmed on GitHub right before a write names them.

The index may hold an issue deleted, transferred or closed since it was indexed: a comment that
proposes it as a duplicate (or a group's original) would be a wrong write. Each one named is read
again from the tracker; one gone is left out, in one logged line.
"""

from __future__ import annotations

import logging
from typing import Any

from issue_assistant.comment import Plan
from issue_assistant.tracker.base import Tracker

log = logging.getLogger(__name__)


def gone_reason(tracker: Tracker, number: int, *, open_only: bool = False) -> str | None:
    """Why issue `number` cannot be named in a write now, as the tracker says right now
    (deleted, transferred, a pull request, or with `open_only` no longer open); None when it
    is an issue of this repository in that state."""
    try:
        issue = tracker.get_issue(number)
    except KeyError:
        return f"#{number} is no longer an issue of this repository (deleted or transferred)"
    if issue.is_pull_request:
        return f"#{number} is a pull request"
    if open_only and issue.state != "open":
        return f"#{number} is no longer open"
    return None


def confirm_named(tracker: Tracker, plan: Plan) -> Plan:
    """`plan` without the issues and discussions it names that are no longer there: the
    tracker is the truth at write time, not the index (each drop logged in one line)."""
    update: dict[str, Any] = {}
    if plan.duplicate is not None:
        reason = gone_reason(tracker, plan.duplicate.number)
        if reason is not None:
            log.warning("#%d: the proposed duplicate left out: %s", plan.issue, reason)
            update["duplicate"] = None
            gone = plan.duplicate.number
            update["evidence"] = [e for e in plan.evidence if e.number != gone]
            if f"#{plan.duplicate.number}" in plan.summary:
                update["summary"] = ""  # it speaks of the issue left out
    if plan.see_also:
        known = tracker.discussions()
        if known is not None:
            there = {d.number for d in known}
            kept = [s for s in plan.see_also if s.number in there]
            for s in plan.see_also:
                if s.number not in there:
                    log.warning(
                        "#%d: discussion #%d left out: no longer there", plan.issue, s.number
                    )
            if len(kept) != len(plan.see_also):
                update["see_also"] = kept
    return plan.model_copy(update=update) if update else plan
