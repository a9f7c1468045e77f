"""What an engine works from: the issue as it was, the labels, the project, similar issues.

`Context.write(dir)` lays it out as the `.issue-assistant/` directory the command-line engines read.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from issue_assistant.config import LabelsConfig
from issue_assistant.decision import answer_schema
from issue_assistant.index import IssueIndex
from issue_assistant.render import render
from issue_assistant.tracker.base import Tracker
from issue_assistant.tracker.models import Issue


@dataclass(frozen=True)
class Candidate:
    """An earlier issue shown to the engine, as it was at the moment, with its search score."""

    issue: Issue
    score: float


@dataclass
class Context:
    issue: Issue
    repository: str
    labels: LabelsConfig
    project: str
    as_of: datetime
    tracker: Tracker
    index: IssueIndex
    candidates: list[Candidate] = field(default_factory=list)
    # The repository's files as of the moment, for the file tools (None: no file tools).
    checkout: Path | None = None

    def _candidates(self, hits: list) -> list[Candidate]:
        out: list[Candidate] = []
        for hit in hits:
            try:
                out.append(Candidate(self.tracker.get_issue(hit.number), hit.score))
            except KeyError:
                continue
        return out

    def search(self, text: str, limit: int = 10) -> list[Candidate]:
        """Read-only tool: earlier issues matching `text`, as they were at the moment."""
        hits = self.index.search(text, as_of=self.as_of, limit=limit, exclude=[self.issue.number])
        return self._candidates(hits)

    def search_like(self, limit: int = 30) -> list[Candidate]:
        """Earlier issues most like the new one, as they were at the moment."""
        hits = self.index.similar_to(self.issue, as_of=self.as_of, limit=limit)
        return self._candidates(hits)

    def get_issue(self, number: int) -> Issue | None:
        """Read-only tool: an earlier issue as it was at the moment (None if unknown or later)."""
        if number == self.issue.number:
            return None
        try:
            return self.tracker.get_issue(number)
        except KeyError:
            return None

    @classmethod
    def build(
        cls,
        issue: Issue,
        *,
        tracker: Tracker,
        index: IssueIndex,
        labels: LabelsConfig,
        project: str,
        as_of: datetime,
        candidates: int = 8,
    ) -> Context:
        ctx = cls(
            issue=issue,
            repository=tracker.repository.full_name,
            labels=labels,
            project=project,
            as_of=as_of,
            tracker=tracker,
            index=index,
        )
        hits = index.similar_to(issue, as_of=as_of, limit=candidates)
        ctx.candidates = ctx._candidates(hits)
        return ctx

    def files(self) -> dict[str, str]:
        """The context directory's files, name to text (deterministic for the same input)."""
        values = {
            "ctx": self,
            "issue": self.issue,
            "labels": self.labels,
            "schema": json.dumps(answer_schema(self.labels), indent=2, sort_keys=True),
        }
        return {
            name: render(f"context/{name}.j2", **values)
            for name in ("issue.md", "labels.md", "project.md", "similar.md", "instructions.md")
        }

    def write(self, directory: str | Path) -> Path:
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        for name, text in self.files().items():
            (d / name).write_text(text, encoding="utf-8")
        return d
