"""What an engine works from: the issue as it was, the labels, the project, similar issues, and
the repository at the moment (`moment.Moment`) its tools read.

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
from issue_assistant.index.candidates import Candidate, PairMemo
from issue_assistant.index.discussions import DiscussionHit
from issue_assistant.likely.code import CodeIndex, LikelyFile
from issue_assistant.moment import Moment
from issue_assistant.render import render
from issue_assistant.tracker.base import Tracker
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
    """What the engine reads about one issue at its moment (built by `context_build`): data,
    and the repository at the moment (`moment`) the tools read."""

    issue: Issue
    moment: Moment
    labels: LabelsConfig
    project: str
    as_of: datetime
    candidates: list[Candidate] = field(default_factory=list)
    settings: ContextConfig = field(default_factory=ContextConfig)
    releases: list[Release] | None = None  # newest first; None when unknown
    discussions: list[DiscussionHit] = field(default_factory=list)
    see_also: list[DiscussionHit] = field(default_factory=list)
    likely_files: list[LikelyFile] = field(default_factory=list)
    # the likely files the comment shows: at most SHOWN_MAX, each at or above `show_above`
    shown_files: list[LikelyFile] = field(default_factory=list)
    # the first 10 likely files (for evaluate's accuracy @10)
    ranked_files: list[LikelyFile] = field(default_factory=list)
    # The repository's files as of the moment, for the file tools (None: no file tools).
    checkout: Path | None = None
    # The candidates' duplicate features, computed once (`index.duplicates.pair_features`).
    pairs: PairMemo = field(default_factory=PairMemo, repr=False)

    @property
    def repository(self) -> str:
        return self.moment.repository

    @property
    def tracker(self) -> Tracker:
        return self.moment.tracker

    @property
    def index(self) -> IssueIndex:
        return self.moment.index

    @property
    def code(self) -> CodeIndex | None:
        return self.moment.code

    def form_answers(self) -> forms.Answers:
        """The issue form's answers in the body, typed by the checkout's forms when there is a
        checkout (`.github/ISSUE_TEMPLATE/*.yml`: ids, dropdowns, prefilled text)."""
        root = self.code.root if self.code is not None else self.checkout
        found = forms.read_forms(root) if root is not None else []
        return forms.parse(self.issue.body, forms.form_of(self.issue.body, found))

    def known_files(self) -> list[str]:
        """The context files about the repository that hold something known at the moment."""
        known = [
            ("releases.md", self.releases is not None),
            ("discussions.md", self.moment.discussions is not None),
            ("files.md", self.code is not None),
        ]
        return [name for name, present in known if present]

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
