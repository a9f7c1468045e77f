"""The point-in-time view the MCP server's tools read when there is no issue under analysis."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from issue_assistant.config.labels import LabelsConfig
from issue_assistant.index import IssueIndex
from issue_assistant.index.candidates import Candidate
from issue_assistant.index.discussions import DiscussionHit, DiscussionIndex, search_seen
from issue_assistant.likely.code import CodeIndex, LikelyFile
from issue_assistant.likely.rank import likely_files
from issue_assistant.tracker.asof import AsOfView
from issue_assistant.tracker.base import Tracker
from issue_assistant.tracker.models import Discussion, Issue, Release


@dataclass
class RepoView:
    """A repository's issues, labels, releases, discussions and code as they were at `as_of`
    (None: as they are now). `discussion_index` and `code` are None where they are unknown."""

    tracker: Tracker
    index: IssueIndex
    labels: LabelsConfig
    as_of: datetime | None = None
    discussion_index: DiscussionIndex | None = None
    code: CodeIndex | None = None
    _visible: dict[int, Discussion] = field(default_factory=dict, repr=False)

    @classmethod
    def build(
        cls,
        tracker: Tracker,
        index: IssueIndex,
        labels: LabelsConfig,
        as_of: datetime | None = None,
        code: CodeIndex | None = None,
    ) -> RepoView:
        view = AsOfView(tracker, as_of) if as_of is not None else tracker
        out = cls(view, index, labels, as_of, code=code)
        visible = view.discussions()
        if visible is not None:
            # one index over every discussion; the moment's filter is part of each search
            out.discussion_index = DiscussionIndex.shared(tracker.discussions() or visible)
            out._visible = {d.number: d for d in visible}
        return out

    @property
    def repository(self) -> str:
        return self.tracker.repository.full_name

    def search(self, text: str, limit: int = 10) -> list[Candidate]:
        out: list[Candidate] = []
        for hit in self.index.search(text, as_of=self.as_of, limit=limit):
            issue = self.get_issue(hit.number)
            if issue is not None and self._matched_then(text, hit.title, issue):
                out.append(Candidate(issue, hit.score))
        return out

    def _matched_then(self, text: str, indexed: str, issue: Issue) -> bool:
        """Whether a hit would have matched as of the moment: an issue renamed since (its title
        then is not the one indexed, as when the index was made without its history) matches
        only on words of its title then or its description."""
        if self.as_of is None or issue.title == indexed:
            return True
        return bool(set(self.index.vector(text)) & set(self.index.vector(issue.text)))

    def get_issue(self, number: int) -> Issue | None:
        try:
            return self.tracker.get_issue(number)
        except KeyError:
            return None

    def list_releases(self, limit: int = 10) -> list[Release] | None:
        """Releases published before `as_of`, newest first (None: the tracker does not know)."""
        releases = self.tracker.releases()
        return None if releases is None else releases[:limit]

    def search_discussions(self, text: str, limit: int = 5) -> list[DiscussionHit]:
        """Discussions created before `as_of` most like `text`, as they were then."""
        return search_seen(self.discussion_index, text, limit, self.as_of, self._visible)

    def likely(self, text: str, limit: int = 5) -> list[LikelyFile]:
        """The checkout's files most likely concerned by `text` ([] without a code index)."""
        if self.code is None:
            return []
        project = self.repository.rpartition("/")[2]
        return likely_files(self.code, "", text, limit=limit, project=project)
