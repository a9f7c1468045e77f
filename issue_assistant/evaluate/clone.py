"""`evaluate --checkout CLONE` with the clone's history: the code as it was when each issue was
opened, and the fixes its merge commits show.

When the checkout is a git clone whose history reaches back before an issue, that issue's likely
files come from the last commit before it was opened (read from git objects, one code index per
moment and thread, file versions analysed once), so no file added later can be proposed. The
fixing pull requests the tracker closes issues with ("Fixes #N") are joined with the merge
commits (`evaluate.fixes`): their changed files and functions are the truth where the tracker has
no `fixed_by`, and the fixes merged before a moment are the likely files' history signal.
"""

from __future__ import annotations

import threading
from datetime import datetime
from pathlib import Path

from issue_assistant.evaluate.fixes import Fix, build_fixes
from issue_assistant.evaluate.likely_replay import history_of
from issue_assistant.likely.code import CodeIndex
from issue_assistant.likely.code_git import CommitIndexes
from issue_assistant.likely.fix_history import FixHistory
from issue_assistant.likely.gitread import Commit, commit_before, first_parent_log, git
from issue_assistant.tracker.base import Tracker
from issue_assistant.tracker.models import Issue


def has_history(root: str | Path) -> bool:
    """Whether `root` is a git clone with more than one commit and not shallow."""
    try:
        shallow = git(root, "rev-parse", "--is-shallow-repository").strip() == b"true"
        count = int(git(root, "rev-list", "--count", "--first-parent", "HEAD").strip() or 0)
    except Exception:  # noqa: BLE001 - not a repository, no commit: no history to use
        return False
    return not shallow and count > 1


class CloneHistory:
    def __init__(self, clone: str | Path, tracker: Tracker, *, max_file_kb: int, max_files: int):
        self.clone = Path(clone)
        self.commits: list[Commit] = first_parent_log(self.clone)
        self.fixes: dict[int, Fix] = {f.issue: f for f in build_fixes(tracker, self.clone)}
        self.history: FixHistory = history_of(tracker, self.fixes.values())
        self.max_file_kb, self.max_files = max_file_kb, max_files
        self.memo: dict[str, tuple[str, str]] = {}  # shared by the threads' indexes
        self._local = threading.local()

    def code_at(self, when: datetime) -> CodeIndex | None:
        """The code index of the last commit before `when` (None: the history starts later)."""
        commit = commit_before(self.commits, when)
        if commit is None:
            return None
        indexes = getattr(self._local, "indexes", None)
        if indexes is None:
            indexes = CommitIndexes(
                self.clone,
                max_file_kb=self.max_file_kb,
                max_files=self.max_files,
                keep=1,
                memo=self.memo,
            )
            self._local.indexes = indexes
        return indexes.at(commit.sha)

    def truth(self, issue: Issue) -> tuple[list[str] | None, list[str] | None]:
        """The files (every kind) and `path::function`s the issue's fix changed, or (None, None)."""
        fix = self.fixes.get(issue.number)
        if fix is None:
            return None, None
        return fix.paths(("source", "test", "doc")), fix.functions(("source", "test", "doc"))
