"""What the tracker says of duplicates: which issues were closed as one, and which originals a
duplicate_of chain accepts. Evaluate's ground truth and the duplicate calibration both read it."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import timedelta
from difflib import SequenceMatcher

from issue_assistant.forms import NO_RESPONSE
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


# A report filed again by its reporter: within this many minutes of the first, with a title
# and a body nearly the same (difflib's ratio at least these), or the same title where one of
# the two bodies says nothing beyond it. GitHub shows a deleted account as `ghost`, so two of its
# issues may be two people's.
REFILE_MINUTES = 30
REFILE_TITLE = 0.8
REFILE_BODY = 0.9
_NOBODY = frozenset({"ghost"})
# What fills a body without saying anything: HTML comments (template hints), headings (a form's
# field names), an unanswered form field.
_FILLER = re.compile(
    r"<!--.*?(-->|$)|^[ ]{0,3}#{1,6}[ \t][^\n]*$|" + re.escape(NO_RESPONSE),
    re.DOTALL | re.MULTILINE,
)
_WORD = re.compile(r"\w{2,}")


def filed_again(first: Issue, later: Issue) -> bool:
    """Whether `later` is `first` filed again by its reporter: the same reporter (not a deleted
    account), within `REFILE_MINUTES`, with nearly the same title and body, or with the same
    title where one body says nothing beyond it (an empty form filled in the second time,
    huggingface/datasets #4453 and #4454); not when the first was closed before the second was
    filed (the second replaces it). Pull requests are not issues here."""
    if first.is_pull_request or later.is_pull_request:
        return False
    if first.closed_at is not None and first.closed_at <= later.created_at:
        return False
    if later.user.login in _NOBODY or first.user.login != later.user.login:
        return False
    if not timedelta(0) <= later.created_at - first.created_at <= timedelta(minutes=REFILE_MINUTES):
        return False
    if _same_text(first, later):
        return True
    return _title(first) == _title(later) and (_says_nothing(first) or _says_nothing(later))


def refiled(issues: Iterable[Issue]) -> dict[int, frozenset[int]]:
    """The issues that are a report filed again by the same reporter (`filed_again`), each with
    the earlier copies: duplicates a maintainer closes whether or not anybody marked them
    (python-poetry #10283-#10285, "please close all three issues")."""
    ordered = sorted((i for i in issues if not i.is_pull_request), key=lambda i: i.created_at)
    window = timedelta(minutes=REFILE_MINUTES)
    out: dict[int, frozenset[int]] = {}
    for n, later in enumerate(ordered):
        earlier = []
        for j in range(n - 1, -1, -1):  # back in time (not a copy of every earlier issue)
            first = ordered[j]
            if later.created_at - first.created_at > window:
                break
            if filed_again(first, later):
                earlier.append(first.number)
        if earlier:
            out[later.number] = frozenset(earlier)
    return out


def _title(issue: Issue) -> str:
    return " ".join(issue.title.casefold().split())


def _says_nothing(issue: Issue) -> bool:
    """The body has no word its title does not have, once template filler is left out."""
    words = {w.casefold() for w in _WORD.findall(_FILLER.sub(" ", issue.body or ""))}
    return words <= {w.casefold() for w in _WORD.findall(issue.title)}


def _same_text(a: Issue, b: Issue) -> bool:
    def alike(x: str, y: str, least: float) -> bool:
        # the two quick ratios bound the ratio from above: most pairs end there
        m = SequenceMatcher(None, x[:4000], y[:4000], autojunk=False)
        return m.real_quick_ratio() >= least and m.quick_ratio() >= least and m.ratio() >= least

    return alike(a.title.strip().lower(), b.title.strip().lower(), REFILE_TITLE) and alike(
        a.body or "", b.body or "", REFILE_BODY
    )


def known_duplicate(issue: Issue, again: Mapping[int, frozenset[int]]) -> bool:
    """A duplicate whose original is known: it names one (duplicate_of), or it is a report its
    reporter filed again (`again`, from `refiled`)."""
    return issue.duplicate_of is not None or issue.number in again


def originals(tracker: Tracker, issue: Issue, again: Mapping[int, frozenset[int]]) -> list[int]:
    """The originals that count as right for `issue`, the one it duplicates first: its named
    original and that one's duplicate_of chain, else the earlier copies of a report its
    reporter filed again (`again`, from `refiled`); none for an issue that is neither."""
    if issue.duplicate_of is not None:
        return accepted_originals(tracker, issue.duplicate_of)
    return sorted(again.get(issue.number, ()))  # numbers grow with time: the first copy first
