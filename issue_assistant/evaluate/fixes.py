"""The ground truth for the likely files: which files (and functions) fixed each issue.

Joins a tracker's pull requests that close an issue ("Fixes #N", or its URL) with the merge
commits of a local clone's first-parent history (`… (#PR)` squash merges, `Merge pull request
#PR` merges). Each fixed issue gets its fixing pull requests and commits, the fix's parent
commit (the code as it was when the fix began), the *moment* (the last commit before the issue
was opened: the strict point to localise from) and the files the fix changed, each with its kind
(source, test or doc) and, where the diff names them, the functions it touched.

Written as JSON Lines (`write_fixes`), one issue per line, and read back by `read_fixes`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from issue_assistant.atomic import write_atomic
from issue_assistant.errors import UserError
from issue_assistant.likely.checkout import Kind, file_kind
from issue_assistant.likely.functions import spans, touched
from issue_assistant.likely.gitread import (
    Change,
    Commit,
    ObjectReader,
    changed_lines,
    changes,
    commit_before,
    first_parent_log,
)
from issue_assistant.tracker.base import Tracker
from issue_assistant.tracker.github_context import closing_links

_FUNCTION_FILES = (".py", ".js", ".ts", ".go", ".rs", ".java", ".rb", ".c", ".cc", ".cpp", ".h")


class FixedFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str  # as it was in the parent (the old name of a renamed file)
    status: str  # A, M, D, R, C, T (git's)
    kind: Kind
    functions: list[str] = []  # the functions and classes the fix touched, where known


class Fix(BaseModel):
    """One fixed issue: what fixed it and from which code."""

    model_config = ConfigDict(extra="forbid")

    issue: int
    opened: datetime
    prs: list[int]
    commits: list[str]  # the fixing merge commits, oldest first
    merged: datetime  # when the first of them was committed
    parent: str  # the first fixing commit's first parent
    moment: str  # the last first-parent commit before the issue was opened
    files: list[FixedFile]

    def paths(self, kinds: Iterable[str] = ("source",)) -> list[str]:
        """The changed files of these kinds that existed before the fix (added files excluded)."""
        wanted = set(kinds)
        return [f.path for f in self.files if f.kind in wanted and f.status != "A"]

    def functions(self, kinds: Iterable[str] = ("source",)) -> list[str]:
        """`path::function` for the functions the fix touched in files of these kinds."""
        wanted = set(kinds)
        return [
            f"{f.path}::{name}"
            for f in self.files
            if f.kind in wanted and f.status != "A"
            for name in f.functions
        ]


def merges_by_pull(history: list[Commit]) -> dict[int, Commit]:
    """Pull request number to its merge commit on the first-parent line (the first one named)."""
    out: dict[int, Commit] = {}
    for c in history:
        n = c.pull_request
        if n is not None and c.parents and n not in out:
            out[n] = c
    return out


def _fixed_file(
    reader: ObjectReader, change: Change, hunks: dict[str, list[tuple[int, int]]]
) -> FixedFile:
    path = change.before or change.path
    names: list[str] = []
    if change.status in ("M", "R") and path.endswith(_FUNCTION_FILES) and hunks.get(path):
        old = reader.blob(change.blob) if change.blob else None
        if old is not None and b"\0" not in old[:8192]:
            names = touched(spans(old.decode("utf-8", "replace"), path), hunks[path])
    return FixedFile(path=path, status=change.status, kind=file_kind(path), functions=names[:50])


def build_fixes(tracker: Tracker, clone: str | Path, *, functions: bool = True) -> list[Fix]:
    """The fixes of `tracker`'s issues found in `clone`'s history, oldest issue first."""
    reader = ObjectReader(clone)
    history = first_parent_log(clone)
    if not history:
        raise UserError("the clone has no commits", where=str(clone))
    merges = merges_by_pull(history)
    full_name = tracker.repository.full_name
    links = closing_links(tracker.all_issues(), full_name)
    out: list[Fix] = []
    try:
        for number in sorted(links):
            issue = tracker.get_issue(number)
            commits = sorted(
                (merges[p] for p in links[number] if p in merges), key=lambda c: c.committed
            )
            if not commits:
                continue
            first = commits[0]
            moment = commit_before(history, issue.created_at)
            if moment is None or first.committed < issue.created_at:
                continue  # no code before the issue, or "fixed" before it was opened
            parent = first.parents[0]
            files: dict[str, FixedFile] = {}
            for c in commits:
                hunks = changed_lines(clone, c.parents[0], c.sha) if functions else {}
                for change in changes(clone, c.parents[0], c.sha):
                    fixed = _fixed_file(reader, change, hunks)
                    files.setdefault(fixed.path, fixed)
            out.append(
                Fix(
                    issue=number,
                    opened=issue.created_at,
                    prs=sorted({p for p in links[number] if p in merges}),
                    commits=[c.sha for c in commits],
                    merged=first.committed,
                    parent=parent,
                    moment=moment.sha,
                    files=list(files.values()),
                )
            )
    finally:
        reader.close()
    return out


def write_fixes(path: str | Path, fixes: Iterable[Fix]) -> Path:
    """Write the ground truth as JSON Lines (whole or not at all: a temporary file renamed)."""
    lines = [json.dumps(f.model_dump(mode="json"), sort_keys=True) + "\n" for f in fixes]
    return write_atomic(Path(path), "".join(lines))


def read_fixes(path: str | Path) -> list[Fix]:
    """The ground truth `write_fixes` wrote; a bad line is a UserError naming its number."""
    return list(_read(Path(path)))


def _read(path: Path) -> Iterator[Fix]:
    if not path.is_file():
        raise UserError("no such ground-truth file", where=str(path))
    with path.open(encoding="utf-8") as lines:
        for n, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                yield Fix.model_validate_json(line)
            except ValidationError as exc:
                err = exc.errors()[0]
                field = ".".join(str(p) for p in err["loc"]) or "line"
                raise UserError(f"{field}: {err['msg']}", where=f"{path}:{n}") from None
