"""What the tracker says of duplicates: which issues were closed as one, and which originals a
duplicate_of chain accepts. Evaluate's ground truth and the duplicate calibration both read it."""

from __future__ import annotations

import re

from issue_assistant.tracker.base import Tracker
from issue_assistant.tracker.models import Issue


def accepted_originals(tracker: Tracker, number: int, limit: int = 10) -> list[int]:
    """`number` and the originals its duplicate_of chain leads to (any counts as right)."""
    out = [number]
    for _ in range(limit):
        try:
            nxt = tracker.get_issue(out[-1]).duplicate_of
        except KeyError:
            break
        if nxt is None or nxt in out:
            break
        out.append(nxt)
    return out


_DUPLICATE_LABEL = re.compile(r"(?i)(?<![a-z])duplicate(?![a-z])")


def closed_as_duplicate(issue: Issue) -> bool:
    """Closed (or marked) as a duplicate, whether or not the original is known: closed with
    the reason `duplicate`, marked with GitHub's button, or carrying a label named so
    (`duplicate`, `status: duplicate`, GitHub's default label)."""
    if issue.state != "closed":
        return False
    return (
        issue.state_reason == "duplicate"
        or any(e.event == "marked_as_duplicate" for e in issue.events or [])
        or any(_DUPLICATE_LABEL.search(label) for label in issue.labels)
    )
