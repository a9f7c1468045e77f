"""Groups of open issues that report the same problem, already in the tracker.

Each open issue is scored against the earlier issues still open at the moment with the pairwise
duplicate score of new issues (`index.duplicates`: the same candidates, weights, calibrated
threshold and crowd rule, read as the `similar` engine reads them), and linked to its best one
when it clears the threshold. Linked issues form a group; its proposed original is the oldest
(or, with `[backlog] original = "most-discussed"`, the one with most comments where they are
known). The evidence of each link: the score, and the error lines, exceptions and stack frames
the two share. Nothing here writes: `post` proposes, through the live path, one pending comment
on each newer issue of a group, carrying that one duplicate and nothing else.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from issue_assistant.config.labels import LabelsConfig
from issue_assistant.config.sections import Config
from issue_assistant.context import Context
from issue_assistant.decision import REASON_MAX, Decision, Duplicate, shorten
from issue_assistant.engines import Engine
from issue_assistant.index import IssueIndex, duplicates
from issue_assistant.index.candidates import similar_candidates
from issue_assistant.index.evidence import Rarity, describe, shared
from issue_assistant.moment import Moment
from issue_assistant.named import gone_reason
from issue_assistant.tracker.base import Tracker
from issue_assistant.tracker.models import Issue

log = logging.getLogger(__name__)

# Earlier issues retrieved per open issue before keeping the open ones (closed ones rank too).
DEPTH = 40
# What a link's row and its proposal quote of what both issues show, in characters at most (as
# the comment's table does).
SHOWS_MAX = 300


@dataclass(frozen=True)
class Link:
    """`newer` reports what `older` reports: the score, what both show (in words, each piece
    quoted, as the comment's table says it; "" when nothing quotable), the sentence why."""

    newer: int
    older: int
    score: float
    shows: str
    why: str


@dataclass
class Group:
    members: list[Issue]  # oldest first
    original: Issue
    links: list[Link] = field(default_factory=list)

    @property
    def newer(self) -> list[Issue]:
        """The members opened after the original: each gets the proposal with `--post`."""
        return [m for m in self.members if m.created_at > self.original.created_at]

    def link_of(self, number: int) -> Link | None:
        return next((lk for lk in self.links if lk.newer == number), None)


def both_show(index: IssueIndex, a: Issue, b: Issue, moment: datetime) -> str:
    """What `a` and `b` both show that a reader can check, as `a` words it: the evidence a new
    issue's comment quotes (`index.evidence`), the pieces most earlier issues hold left out."""
    boiler = index.boilerplate()
    mine = duplicates.side(index, a, boiler, moment).traits
    theirs = duplicates.side(index, b, boiler, moment).traits
    return describe(shared(mine, theirs).specific(Rarity(index, moment)), SHOWS_MAX)


class _Finder:
    def __init__(self, at: Moment, config: Config) -> None:
        from issue_assistant.engines.similar import SimilarEngine

        self.at, self.index, self.config = at, at.index, config
        self.similar = SimilarEngine(config, at.labels)

    def link(self, issue: Issue, open_now: dict[int, Issue], moment: datetime) -> Link | None:
        """`issue`'s best earlier open issue by the duplicate score, when it clears the bar."""
        found = similar_candidates(self.index, issue, moment, DEPTH)
        cands = [c for c in found if c.issue.number in open_now and c.issue.number != issue.number]
        if not cands:
            return None
        context = Context(
            issue=issue,
            moment=self.at,
            labels=self.at.labels,
            project="",
            as_of=moment,
            candidates=cands,
        )
        # The similar engine's own duplicate decision: its weights, threshold and crowd rule.
        chosen = self.similar._duplicate(context, self.similar.duplicate_settings(context))
        if chosen is None:
            return None
        shows = both_show(self.index, issue, open_now[chosen.number], moment)
        return Link(issue.number, chosen.number, chosen.confidence, shows, chosen.reason)


def _components(links: list[Link]) -> list[set[int]]:
    parent: dict[int, int] = {}

    def root(n: int) -> int:
        parent.setdefault(n, n)
        while parent[n] != n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    for lk in links:
        parent[root(lk.newer)] = root(lk.older)
    out: dict[int, set[int]] = {}
    for n in parent:
        out.setdefault(root(n), set()).add(n)
    return [members for members in out.values() if len(members) > 1]


def _original(members: list[Issue], rule: str) -> Issue:
    if rule == "most-discussed":
        return max(members, key=lambda m: (len(m.comments or []), -m.created_at.timestamp()))
    return members[0]


def find_groups(
    at: Moment, config: Config, open_issues: Iterable[Issue], moment: datetime
) -> list[Group]:
    """The groups of `open_issues` (as they are at `moment`, which `at` shows) that report the
    same problem, largest first; bots' issues and pull requests are left out."""
    open_now = {
        i.number: i
        for i in open_issues
        if i.state == "open" and not i.is_pull_request and not i.user.is_bot
    }
    finder = _Finder(at, config)
    links = []
    for issue in sorted(open_now.values(), key=lambda i: (i.created_at, i.number)):
        link = finder.link(issue, open_now, moment)
        if link is not None:
            links.append(link)
    groups = []
    for numbers in _components(links):
        members = sorted((open_now[n] for n in numbers), key=lambda i: (i.created_at, i.number))
        original = _original(members, config.backlog.original)
        mine = [lk for lk in links if lk.newer in numbers]
        groups.append(Group(members, original, mine))
    groups.sort(key=lambda g: (-len(g.members), g.original.created_at))
    return groups


class GroupProposal(Engine):
    """The engine of a group's proposal on one newer issue: that duplicate, nothing else (so
    approving it writes only "Duplicate of #N", and the close where `[duplicates] close`)."""

    name = "duplicates"

    def __init__(
        self,
        config: Config,
        labels: LabelsConfig,
        group: Group,
        number: int,
        tracker: Tracker | None = None,
    ) -> None:
        from issue_assistant.engines.base import Deadline

        self.config, self.labels, self.options = config, labels, None  # type: ignore[assignment]
        self.strategy = "rag"
        self.deadline = Deadline(config.engine.timeout_seconds)
        self.group, self.number, self.tracker = group, number, tracker

    def original_gone(self) -> str | None:
        """Why the group's original cannot be proposed now, as the tracker (not the index) says:
        deleted, transferred, or no longer open."""
        if self.tracker is None:
            return None
        return gone_reason(self.tracker, self.group.original.number, open_only=True)

    def decide(self, context: Context) -> Decision:
        original = self.group.original
        gone = self.original_gone()
        if gone is not None:
            log.warning("duplicates: #%d: nothing proposed: %s", self.number, gone)
            return Decision(summary="", engine=self.name)
        link = self.group.link_of(self.number)
        score = link.score if link is not None else 0.0
        others = [f"#{m.number}" for m in self.group.members if m.number != self.number]
        why = link.why if link is not None else ""
        if link is not None and link.shows:
            why += f" Both show {link.shows}."
        summary = (
            f"This open issue reports what open #{original.number} reports: "
            f"a group of {len(self.group.members)} open issues ({', '.join(others)} and this one) "
            f"found among the open issues; #{original.number} is proposed as the original."
        )
        return Decision(
            duplicate=Duplicate(
                number=original.number,
                reason=shorten(why.strip(), REASON_MAX),
                confidence=min(max(score, 0.0), 1.0),
            ),
            summary=summary,
            engine=self.name,
            candidates=[m.number for m in self.group.members if m.number != self.number],
        )
