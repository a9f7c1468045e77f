"""What an engine works from: the issue as it was, the labels, the project, similar issues.

`Context.write(dir)` lays it out as the `.issue-assistant/` directory the command-line engines read.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from issue_assistant import forms
from issue_assistant.config.labels import LabelsConfig
from issue_assistant.config.sections import ContextConfig
from issue_assistant.decision import answer_schema
from issue_assistant.index import IssueIndex
from issue_assistant.index.candidates import Candidate, similar_candidates
from issue_assistant.index.discussions import (
    DiscussionHit,
    DiscussionIndex,
    answering,
    search_seen,
)
from issue_assistant.likely.code import CodeIndex, LikelyFile
from issue_assistant.likely.fix_history import FixHistory
from issue_assistant.likely.rank import LikelyCalibration, likely_files
from issue_assistant.render import render
from issue_assistant.tracker.asof import rewind
from issue_assistant.tracker.base import Tracker, full_tracker
from issue_assistant.tracker.models import Issue, Release

SHOWN_MAX = 5  # the comment never shows more likely files
CONTEXT_FILES = (
    "issue.md",
    "labels.md",
    "project.md",
    "similar.md",
    "releases.md",
    "discussions.md",
    "files.md",
    "instructions.md",
)


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
    settings: ContextConfig = field(default_factory=ContextConfig)
    releases: list[Release] | None = None  # newest first; None when unknown
    discussion_index: DiscussionIndex | None = None
    discussions: list[DiscussionHit] = field(default_factory=list)
    see_also: list[DiscussionHit] = field(default_factory=list)
    code: CodeIndex | None = None
    likely_files: list[LikelyFile] = field(default_factory=list)
    # the fixed issues known at the moment, for the likely files' history signal
    history: FixHistory | None = None
    # the likely files the comment shows: at most SHOWN_MAX, each at or above `show_above`
    shown_files: list[LikelyFile] = field(default_factory=list)
    # the first 10 likely files (for evaluate's accuracy @10)
    ranked_files: list[LikelyFile] = field(default_factory=list)
    _visible: dict = field(default_factory=dict, repr=False)
    # The repository's files as of the moment, for the file tools (None: no file tools).
    checkout: Path | None = None
    # The candidates' duplicate features, computed once (`index.duplicates.pair_features`).
    pair_cache: dict = field(default_factory=dict, repr=False)

    def form_answers(self) -> forms.Answers:
        """The issue form's answers in the body, typed by the checkout's forms when there is a
        checkout (`.github/ISSUE_TEMPLATE/*.yml`: ids, dropdowns, prefilled text)."""
        root = self.code.root if self.code is not None else self.checkout
        found = forms.read_forms(root) if root is not None else []
        return forms.parse(self.issue.body, forms.form_of(self.issue.body, found))

    @property
    def earlier(self) -> datetime:
        """What "earlier" means: created before the issue was (and before the moment), so an
        issue opened in the minute after this one is never an earlier issue."""
        return min(self.as_of, self.issue.created_at)

    def _candidates(self, hits: list) -> list[Candidate]:
        """Search hits as they were at the moment, from the index's stored records."""
        out: list[Candidate] = []
        for hit in hits:
            stored = self.index.stored(hit.number)
            if stored is None or stored.created_at >= self.earlier:
                continue
            out.append(Candidate(rewind(stored, self.as_of), hit.score))
        return out

    def search(self, text: str, limit: int = 10) -> list[Candidate]:
        """Read-only tool: earlier issues matching `text`, as they were at the moment."""
        hits = self.index.search(text, as_of=self.earlier, limit=limit, exclude=[self.issue.number])
        return self._candidates(hits)

    def search_like(self, limit: int = 30) -> list[Candidate]:
        """Earlier issues most like the new one by BM25 (label neighbours), as at the moment."""
        hits = self.index.similar_to(self.issue, as_of=self.earlier, limit=limit)
        return self._candidates(hits)

    def get_issue(self, number: int) -> Issue | None:
        """Read-only tool: an earlier issue as it was at the moment (None if unknown or later)."""
        if number == self.issue.number:
            return None
        try:
            return self.tracker.get_issue(number)
        except KeyError:
            return None

    # ---- releases, discussions and code (the repository beside its issues) -------------------

    def add_repository_context(
        self,
        code: CodeIndex | None = None,
        likely: int = 5,
        history: FixHistory | None = None,
        show_above: float = 0.5,
        calibration: LikelyCalibration | None = None,
    ) -> None:
        """Releases and discussions of the moment, and the likely files when `code` is given
        (the comment shows those whose measured precision is at least `show_above`)."""
        self.releases = self.tracker.releases()
        visible = self.tracker.discussions()
        if visible is not None:
            everything = full_tracker(self.tracker).discussions() or visible
            self.discussion_index = DiscussionIndex.shared(everything)
            self._visible = {d.number: d for d in visible}
            self.discussions = self.search_discussions(self.issue.text, self.settings.discussions)
            hits = self.search_discussions(self.issue.text, 10)
            self.see_also = answering(hits, self.settings.see_also_threshold)[:2]
        self.code = code
        self.history = history
        if code is not None and likely > 0:
            self.ranked_files = likely_files(
                code,
                self.issue.title,
                self.issue.body or "",
                limit=max(likely, 10),
                project=self.repository.rpartition("/")[2],
                history=history,
                before=self.as_of,
                number=self.issue.number,
                calibration=calibration,
            )
            self.likely_files = self.ranked_files[:likely]
            self.shown_files = [
                f
                for f in self.likely_files[:SHOWN_MAX]
                if f.confidence is not None and f.confidence >= show_above
            ]

    def search_discussions(self, text: str, limit: int = 5) -> list[DiscussionHit]:
        """Read-only tool: discussions of the moment most like `text` ([] when unknown)."""
        return search_seen(self.discussion_index, text, limit, self.as_of, self._visible)

    def list_releases(self, limit: int = 10) -> list[Release] | None:
        """Read-only tool: releases published before the moment, newest first (None: unknown)."""
        return None if self.releases is None else self.releases[:limit]

    def likely(self, text: str, limit: int = 5) -> list[LikelyFile]:
        """Read-only tool: the checkout's files most likely concerned by `text`."""
        if self.code is None:
            return []
        return likely_files(
            self.code, "", text, limit=limit, project=self.repository.split("/")[-1]
        )

    def known_files(self) -> list[str]:
        """The context files about the repository that hold something known at the moment."""
        known = [
            ("releases.md", self.releases is not None),
            ("discussions.md", self.discussion_index is not None),
            ("files.md", self.code is not None),
        ]
        return [name for name, present in known if present]

    def plan_notes(self) -> dict:
        """The comment's "see also" discussions and likely files, as `Plan` fields."""
        from urllib.parse import quote

        from issue_assistant.decision import FileLink, SeeAlso

        sha = self.code.sha if self.code is not None else None
        files = []
        for f in self.shown_files:
            url = f.url(self.repository, sha)
            files.append(
                FileLink(
                    path=f.path,
                    line=f.line,
                    url=quote(url, safe=":/#") if url else None,
                    reason=f.reason,
                    why=list(f.why),
                    confidence=f.confidence,
                    standing=f.standing,
                )
            )
        see = [
            SeeAlso(number=h.number, title=h.discussion.title, similarity=round(h.similarity, 3))
            for h in self.see_also
        ]
        return {"likely_files": files, "see_also": see}

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
        settings: ContextConfig | None = None,
        code: CodeIndex | None = None,
        likely: int = 5,
        history: FixHistory | None = None,
        show_above: float = 0.5,
        calibration: LikelyCalibration | None = None,
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
        ctx.candidates = similar_candidates(index, issue, as_of, candidates)
        if settings is not None:
            ctx.settings = settings
        ctx.add_repository_context(code, likely, history, show_above, calibration)
        return ctx

    def files(self) -> dict[str, str]:
        """The context directory's files, name to text (deterministic for the same input)."""
        values = {
            "ctx": self,
            "issue": self.issue,
            "answers": self.form_answers(),
            "labels": self.labels,
            "schema": json.dumps(answer_schema(self.labels), indent=2, sort_keys=True),
        }
        return {name: render(f"context/{name}.j2", **values) for name in CONTEXT_FILES}

    def write(self, directory: str | Path) -> Path:
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        for name, text in self.files().items():
            (d / name).write_text(text, encoding="utf-8")
        return d
