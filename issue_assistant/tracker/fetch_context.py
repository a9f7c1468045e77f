"""The resumable part of `snapshot` after the issues: releases, discussions, fixing PRs' files.

Progress is kept in the partial file as lines of its own (`release`, `discussion`, `progress`,
`closed_by` and `fixed_by`), so an interrupted run resumes after the last page, batch or pull
request it finished. Fixing pull requests come from two sources, deduplicated: "Fixes #N" in a
closed pull request's body, and GitHub's own links (`closedByPullRequestsReferences`, the
issue sidebar's "Development"), asked for many issues per GraphQL query.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from typing import Any

from issue_assistant.errors import GitHubError
from issue_assistant.tracker.github_context import (
    CLOSED_BY_BATCH,
    closed_by,
    closing_links,
    discussion_pages,
    fixable,
    list_releases,
    pull_files,
)
from issue_assistant.tracker.github_tracker import GitHubTracker
from issue_assistant.tracker.models import Discussion, FixedBy, Issue, Release
from issue_assistant.tracker.snapshot import discussion_record, release_record

log = logging.getLogger(__name__)


class ContextState:
    """What is known so far of releases, discussions and fixing pull requests."""

    def __init__(self) -> None:
        self.releases: list[Release] = []
        self.releases_done = False
        self.discussions: dict[int, Discussion] = {}
        self.cursor: str | None = None
        self.discussions_done = False
        self.fixed: dict[int, dict[int, list[str]]] = {}  # issue -> PR -> files
        self.fixed_done = False
        self.linked: dict[int, list[int]] = {}  # issue -> merged PRs GitHub links as closing it
        self.linked_after: int | None = None  # the last issue number asked about
        self.linked_done = False
        # Optional parts that could not be read this run (no access, GraphQL refused): the
        # snapshot leaves them out of `includes`, so readers take them as unknown.
        self.unknown: set[str] = set()

    def load(self, record: dict[str, Any]) -> None:
        """Take one partial-file line (other kinds are ignored)."""
        kind = record.get("kind")
        if kind == "release":
            self.releases.append(Release.model_validate(record))
        elif kind == "discussion":
            d = Discussion.model_validate(record)
            self.discussions[d.number] = d
        elif kind == "fixed_by":
            self.fixed.setdefault(record["issue"], {})[record["pr"]] = list(record["files"])
        elif kind == "closed_by":
            self.linked[record["issue"]] = list(record["prs"])
        elif kind == "progress":
            of = record.get("of")
            if of == "releases":
                self.releases_done = bool(record.get("done"))
            elif of == "discussions":
                self.cursor = record.get("after")
                self.discussions_done = bool(record.get("done"))
            elif of == "fixed_by":
                self.fixed_done = bool(record.get("done"))
            elif of == "closed_by":
                self.linked_after = record.get("after")
                self.linked_done = bool(record.get("done"))

    def records(self) -> list[dict[str, Any]]:
        """Lines that restore this state when loaded in order."""
        out: list[dict[str, Any]] = [release_record(r) for r in self.releases]
        if self.releases_done:
            out.append({"kind": "progress", "of": "releases", "done": True})
        out += [discussion_record(d) for d in self.discussions.values()]
        if self.cursor is not None or self.discussions_done:
            progress = {"after": self.cursor, "done": self.discussions_done}
            out.append({"kind": "progress", "of": "discussions", **progress})
        for issue, linked in self.linked.items():
            out.append({"kind": "closed_by", "issue": issue, "prs": linked})
        if self.linked_after is not None or self.linked_done:
            progress = {"after": self.linked_after, "done": self.linked_done}
            out.append({"kind": "progress", "of": "closed_by", **progress})
        for issue, prs in self.fixed.items():
            for pr, files in prs.items():
                out.append({"kind": "fixed_by", "issue": issue, "pr": pr, "files": files})
        if self.fixed_done:
            out.append({"kind": "progress", "of": "fixed_by", "done": True})
        return out

    def includes(self, fixed_by: bool) -> list[str]:
        kinds = ["releases", "discussions"] + (["fixed_by"] if fixed_by else [])
        return [k for k in kinds if k not in self.unknown]

    def with_fixed_by(self, issues: list[Issue]) -> list[Issue]:
        """`issues` with `fixed_by` set where a fixing pull request is known."""
        out = []
        for issue in issues:
            prs = self.fixed.get(issue.number)
            if prs:
                fixed = [FixedBy(number=n, files=f) for n, f in sorted(prs.items())]
                issue = issue.model_copy(update={"fixed_by": fixed})
            out.append(issue)
        return out


class _optional(contextlib.AbstractContextManager):  # noqa: N801 - used as a statement
    """A part of the snapshot that may fail alone: recorded as unknown, the run goes on."""

    def __init__(self, state: ContextState, kind: str, line: Callable[[str], None]) -> None:
        self.state, self.kind, self.line = state, kind, line

    def __exit__(self, kind: object, exc: BaseException | None, tb: object) -> bool:
        if isinstance(exc, GitHubError):
            self.state.unknown.add(self.kind)
            log.warning("%s unknown (%s); the snapshot says so, the run goes on", self.kind, exc)
            return True
        return False


def fetch_context(
    tracker: GitHubTracker,
    state: ContextState,
    add: Callable[[dict[str, Any]], None],
    issues: list[Issue],
    *,
    fixed_by: bool = False,
    line: Callable[[str], None] = lambda _: None,
) -> None:
    """Fetch what `state` lacks; `add` records (and applies) each new partial-file line.

    Each part is optional: one that cannot be read (`GitHubError` after the retries) is
    recorded in `state.unknown` and the others go on (a later run tries it again)."""
    if not state.releases_done:
        with _optional(state, "releases", line):
            for release in list_releases(tracker):
                add(release_record(release))
            add({"kind": "progress", "of": "releases", "done": True})
            line(f"{len(state.releases)} releases")
    if not state.discussions_done:
        with _optional(state, "discussions", line):
            for page in discussion_pages(tracker, state.cursor):
                for d in page.discussions:
                    add(discussion_record(d))
                progress = {"after": page.cursor, "done": page.last}
                add({"kind": "progress", "of": "discussions", **progress})
            line(f"{len(state.discussions)} discussions")
    if fixed_by and not state.linked_done:
        with _optional(state, "fixed_by", line):
            fetch_closed_by(tracker, state, add, issues)
    if fixed_by and not state.fixed_done and "fixed_by" not in state.unknown:
        links = closing_links(issues, tracker.full_name)
        for number, prs in state.linked.items():
            links[number] = sorted(set(links.get(number, [])) | set(prs))
        for number, prs in sorted(links.items()):
            for pr in prs:
                if pr in state.fixed.get(number, {}):
                    continue
                files = pull_files(tracker, pr)
                add({"kind": "fixed_by", "issue": number, "pr": pr, "files": files})
        add({"kind": "progress", "of": "fixed_by", "done": True})
        line(f"{len(links)} issues closed by a pull request")


def fetch_closed_by(
    tracker: GitHubTracker,
    state: ContextState,
    add: Callable[[dict[str, Any]], None],
    issues: list[Issue],
    batch: int = CLOSED_BY_BATCH,
) -> None:
    """GitHub's closing links of every closed issue, `batch` issues per GraphQL query."""
    todo = sorted(i.number for i in issues if fixable(i))
    if state.linked_after is not None:
        todo = [n for n in todo if n > state.linked_after]
    for start in range(0, len(todo), batch):
        chunk = todo[start : start + batch]
        for number, prs in sorted(closed_by(tracker, chunk, batch).items()):
            add({"kind": "closed_by", "issue": number, "prs": prs})
        done = start + batch >= len(todo)
        add({"kind": "progress", "of": "closed_by", "after": chunk[-1], "done": done})
    if not todo:
        add({"kind": "progress", "of": "closed_by", "after": state.linked_after, "done": True})
