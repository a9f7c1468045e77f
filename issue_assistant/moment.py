"""The repository at a moment: what an analysis, a tool or the MCP server reads, in one object.

A `Moment` is built once per entry (a command, the Action's run, evaluate's run, the MCP server)
and passed down. It holds the tracker as it was at the moment (an `AsOfView`, or the tracker as
it is now), the issue index, the label set, the releases and discussions the tracker knows then,
the checkout's code index and the fixes of earlier issues (each None where unknown), and the
learned state (`learn.learned`). What it may not know is a member that is None, never probed.

The indexes built over the whole history (the issues, the discussions, the code, the fixes) are
built once and shared by every moment derived with `Moment.at`: each query filters by its moment.

In a live run the moment holds the tracker on GitHub as well (`live`: an issue's timeline, the
rate budget, the writes through `writes.Writer`), and the live flow reads them from it once the
moment exists: `live.analyze_live`'s proposal (the timeline, the looks before a write, the
writes) and the backlog's walk (the rate budget). Three parts of a live run have no moment by
design, and take the tracker as a typed parameter instead: the index sync (`sync.refresh_index`,
and the Action's `index` that is only it and the label model's refit, `index_run`), which builds
the index a moment holds and so runs before there is one; the looks before an analysis
(`live.analyze_live`'s skip checks), so that a skipped issue costs no sync; and the approval
sweep and the follow-up (`approve/sweep.py`, `followup.py`), which act on a maintainer's vote or
a reporter's answer on the assistant's comment, and analyze no issue and read no index.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING

from issue_assistant.config.labels import LabelsConfig
from issue_assistant.config.sections import Config
from issue_assistant.index import IssueIndex
from issue_assistant.index.candidates import Candidate
from issue_assistant.index.discussions import DiscussionHit, DiscussionIndex, search_seen
from issue_assistant.likely.code import CodeIndex, LikelyFile, code_index_for
from issue_assistant.likely.fix_history import FixHistory
from issue_assistant.likely.rank import likely_files
from issue_assistant.tracker.asof import rewind
from issue_assistant.tracker.base import Tracker, WritableTracker, full_tracker
from issue_assistant.tracker.models import Discussion, Issue, Release

if TYPE_CHECKING:
    from issue_assistant.learn.learned import Learned


@dataclass(frozen=True)
class Discussions:
    """Every discussion indexed once (`index`), and those the moment shows, as they were then."""

    index: DiscussionIndex
    visible: dict[int, Discussion]

    @classmethod
    def of(cls, view: Tracker, everything: DiscussionIndex | None = None) -> Discussions | None:
        """The discussions `view` shows (None when it does not know them), searched with
        `everything` (an index over the whole tracker's) when given, else one built here."""
        visible = view.discussions()
        if visible is None:
            return None
        if everything is None:
            everything = DiscussionIndex(full_tracker(view).discussions() or visible)
        return cls(everything, {d.number: d for d in visible})

    def search(self, text: str, limit: int, before: datetime | None) -> list[DiscussionHit]:
        """The discussions created before `before` most like `text`, as the moment shows them."""
        return search_seen(self.index, text, limit, before, self.visible)


@dataclass(frozen=True)
class Moment:
    """The repository as of `as_of` (None: as it is now), for the analysis and the tools."""

    tracker: Tracker  # as of the moment (an `AsOfView`), or as it is now
    index: IssueIndex
    labels: LabelsConfig
    learned: Learned
    as_of: datetime | None = None
    releases: list[Release] | None = None  # newest first; None when unknown
    discussions: Discussions | None = None
    code: CodeIndex | None = None
    fixes: FixHistory | None = None  # the fixed issues, for the likely files' history signal
    # The tracker on GitHub as it is now, in a live run: an issue's timeline, the rate budget,
    # and the writes (made only through `writes.Writer`); None offline, where there is none.
    live: WritableTracker | None = None

    @classmethod
    def build(
        cls,
        view: Tracker,
        index: IssueIndex,
        labels: LabelsConfig,
        learned: Learned,
        *,
        as_of: datetime | None = None,
        code: CodeIndex | None = None,
        fixes: FixHistory | None = None,
        live: WritableTracker | None = None,
    ) -> Moment:
        """The moment `view` shows: its releases and discussions read now."""
        return cls(
            view,
            index,
            labels,
            learned,
            as_of=as_of,
            releases=view.releases(),
            discussions=Discussions.of(view),
            code=code,
            fixes=fixes,
            live=live,
        )

    def at(self, view: Tracker, as_of: datetime | None) -> Moment:
        """The same repository through `view` (rewound to `as_of`, or one issue read afresh):
        the indexes built over the whole history are shared, the releases and the discussions
        are those `view` shows."""
        everything = self.discussions.index if self.discussions is not None else None
        return replace(
            self,
            tracker=view,
            as_of=as_of,
            releases=view.releases(),
            discussions=Discussions.of(view, everything),
        )

    @property
    def repository(self) -> str:
        return self.tracker.repository.full_name

    def on_github(self) -> WritableTracker:
        """The tracker on GitHub of a live run (`live`); a ValueError for a moment offline."""
        if self.live is None:
            raise ValueError(f"the moment of {self.repository} is offline: no tracker on GitHub")
        return self.live

    @property
    def replay(self) -> bool:
        """Whether this moment is the past replayed offline (not the tracker as it is now)."""
        return self.tracker.point_in_time is not None

    # ---- the read-only tools' reads (`tools/`), with or without an issue under analysis ---------

    def get_issue(self, number: int, under: Issue | None = None) -> Issue | None:
        """An issue as it was at the moment (None if unknown, later, or the one `under`
        analysis)."""
        if under is not None and number == under.number:
            return None
        try:
            return self.tracker.get_issue(number)
        except KeyError:
            return None

    def search(self, text: str, limit: int = 10, under: Issue | None = None) -> list[Candidate]:
        """Issues matching `text` as they were at the moment; with an issue `under` analysis,
        only those created before it."""
        if under is not None:
            before = self.before(under)
            hits = self.index.search(text, as_of=before, limit=limit, exclude=[under.number])
            return self._earlier(hits, under)
        out: list[Candidate] = []
        for hit in self.index.search(text, as_of=self.as_of, limit=limit):
            issue = self.get_issue(hit.number)
            if issue is not None and self._matched_then(text, hit.title, issue):
                out.append(Candidate(issue, hit.score))
        return out

    def like(self, issue: Issue, limit: int = 30) -> list[Candidate]:
        """Earlier issues most like `issue` by BM25 (label neighbours), as at the moment."""
        hits = self.index.similar_to(issue, as_of=self.before(issue), limit=limit)
        return self._earlier(hits, issue)

    def when(self, issue: Issue) -> datetime:
        """The moment of `issue`'s analysis: the moment, else its creation."""
        return self.as_of if self.as_of is not None else issue.created_at

    def before(self, issue: Issue) -> datetime:
        """What "earlier" means for `issue`: created before it was (and before the moment), so
        an issue opened in the minute after it is never an earlier issue."""
        return min(self.when(issue), issue.created_at)

    def _earlier(self, hits: list, issue: Issue) -> list[Candidate]:
        """Search hits as they were at the moment, from the index's stored records."""
        out: list[Candidate] = []
        for hit in hits:
            stored = self.index.stored(hit.number)
            if stored is None or stored.created_at >= self.before(issue):
                continue
            out.append(Candidate(rewind(stored, self.when(issue)), hit.score))
        return out

    def _matched_then(self, text: str, indexed: str, issue: Issue) -> bool:
        """Whether a hit would have matched as of the moment: an issue renamed since (its title
        then is not the one indexed, as when the index was made without its history) matches
        only on words of its title then or its description."""
        if self.as_of is None or issue.title == indexed:
            return True
        return bool(set(self.index.vector(text)) & set(self.index.vector(issue.text)))

    def list_releases(self, limit: int = 10) -> list[Release] | None:
        """Releases published before the moment, newest first (None: unknown)."""
        return None if self.releases is None else self.releases[:limit]

    def search_discussions(
        self, text: str, limit: int = 5, under: Issue | None = None
    ) -> list[DiscussionHit]:
        """Discussions of the moment most like `text` ([] when unknown)."""
        if self.discussions is None:
            return []
        before = self.when(under) if under is not None else self.as_of
        return self.discussions.search(text, limit, before)

    def likely(self, text: str, limit: int = 5) -> list[LikelyFile]:
        """The checkout's files most likely concerned by `text` ([] without a code index)."""
        if self.code is None:
            return []
        project = self.repository.rpartition("/")[2]
        return likely_files(self.code, "", text, limit=limit, project=project)


def open_moment(
    view: Tracker,
    index: IssueIndex,
    labels: LabelsConfig,
    config: Config,
    learned: Learned,
    *,
    as_of: datetime | None = None,
    live: WritableTracker | None = None,
) -> Moment:
    """The moment `view` shows with the code index `[code] checkout` names (or none) and, with
    it, the fixes of earlier issues the whole tracker knows (none when no fix is known); `live`:
    the tracker on GitHub, in a live run."""
    code = code_index_for(config, view.repository.full_name)
    fixes = FixHistory.known(full_tracker(view)) if code is not None else None
    return Moment.build(
        view, index, labels, learned, as_of=as_of, code=code, fixes=fixes, live=live
    )
