"""The point-in-time view the MCP server's tools read when there is no issue under analysis."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from issue_assistant.config import LabelsConfig
from issue_assistant.context import Candidate
from issue_assistant.index import IssueIndex
from issue_assistant.tracker.asof import AsOfView
from issue_assistant.tracker.base import Tracker, releases_of
from issue_assistant.tracker.models import Issue, Release


@dataclass
class RepoView:
    """A repository's issues and labels as they were at `as_of` (None: as they are now)."""

    tracker: Tracker
    index: IssueIndex
    labels: LabelsConfig
    as_of: datetime | None = None

    @classmethod
    def build(
        cls,
        tracker: Tracker,
        index: IssueIndex,
        labels: LabelsConfig,
        as_of: datetime | None = None,
    ) -> RepoView:
        view = AsOfView(tracker, as_of) if as_of is not None else tracker
        return cls(view, index, labels, as_of)

    @property
    def repository(self) -> str:
        return self.tracker.repository.full_name

    def search(self, text: str, limit: int = 10) -> list[Candidate]:
        out: list[Candidate] = []
        for hit in self.index.search(text, as_of=self.as_of, limit=limit):
            issue = self.get_issue(hit.number)
            if issue is not None:
                out.append(Candidate(issue, hit.score))
        return out

    def get_issue(self, number: int) -> Issue | None:
        try:
            return self.tracker.get_issue(number)
        except KeyError:
            return None

    def list_releases(self, limit: int = 10) -> list[Release] | None:
        """Releases published before `as_of`, newest first (None: the tracker does not know)."""
        releases = releases_of(self.tracker)
        return None if releases is None else releases[:limit]
