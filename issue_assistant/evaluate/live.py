"""Live mode: the repository read from GitHub once, into memory; nothing is written to GitHub.

All issues are listed (one paginated listing); timelines (events and comments) are fetched only
for the closed issues examined, newest first, until enough qualify, and for their duplicates'
originals (and the earlier copies of reports filed again). The others keep unknown histories, so
their current labels show through the rewind.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING

from issue_assistant.config.labels import LabelsConfig
from issue_assistant.evaluate.gold import assistant_touched
from issue_assistant.evaluate.selection import WINDOW, qualifies
from issue_assistant.progress import Progress, counted
from issue_assistant.tracker.base import IssuesOnly
from issue_assistant.tracker.duplicates import refiled
from issue_assistant.tracker.models import MAINTAINER_ASSOCIATIONS, Issue, Repository
from issue_assistant.tracker.snapshot import Snapshot

if TYPE_CHECKING:
    from issue_assistant.tracker.github_tracker import GitHubTracker

log = logging.getLogger(__name__)


class _Issues(IssuesOnly):
    """A minimal in-memory `Tracker` while the histories come in."""

    def __init__(self, repository: Repository, issues: list[Issue]) -> None:
        self.repository = repository
        self.by_number = {i.number: i for i in issues}

    def get_issue(self, number: int) -> Issue:
        return self.by_number[number]

    def all_issues(self) -> Iterator[Issue]:
        return iter(sorted(self.by_number.values(), key=lambda i: (i.created_at, i.number)))


def _maintainers(issues: list[Issue], roles: dict[str, str]) -> list[str]:
    """People with triage rights among those looked up, and anyone GitHub calls a member."""
    from issue_assistant.tracker.github_tracker import TRIAGE_ROLES

    found = {login for login, role in roles.items() if role in TRIAGE_ROLES}
    for issue in issues:
        if issue.author_association in MAINTAINER_ASSOCIATIONS:
            found.add(issue.user.login)
        for c in issue.comments or []:
            if c.author_association in MAINTAINER_ASSOCIATIONS:
                found.add(c.user.login)
    return sorted(found, key=str.lower)


def read_live(
    gh: GitHubTracker,
    labels: LabelsConfig,
    bot_login: str,
    limit: int,
    window: int = WINDOW,
    *,
    with_context: bool = True,
) -> tuple[Snapshot, int]:
    """The repository as a snapshot in memory, and how many closed issues were examined;
    `with_context`: with every release and discussion too (the replays' context)."""
    from issue_assistant.tracker.fetch import (
        canonical_or_unknown,
        duplicate_pattern,
        find_duplicate_of,
        marked_duplicate,
    )

    repository = gh.repository
    log.info("listing the issues of %s", repository.full_name)
    memory = _Issues(repository, list(counted(gh.all_issues(), "listed")))
    roles: dict[str, str] = {}
    pattern = duplicate_pattern(repository.full_name)

    def role_of(login: str) -> str:
        if login not in roles:
            roles[login] = gh.permission(login)
        return roles[login]

    def fetch(issue: Issue) -> Issue:
        events, comments = gh.history(issue.number)
        for e in events:
            if e.actor is not None and not e.actor.is_bot and e.event == "labeled":
                role_of(e.actor.login)
        dup = find_duplicate_of(issue.number, events, comments, role_of, pattern)
        if dup is None and marked_duplicate(events):
            dup = canonical_or_unknown(gh, issue.number)  # closed with the button: GraphQL
        full = issue.model_copy(
            update={"events": events, "comments": comments, "duplicate_of": dup}
        )
        memory.by_number[issue.number] = full
        return full

    again = refiled(memory.all_issues())  # the listing has every title, body and reporter
    closed = [i for i in memory.all_issues() if not i.is_pull_request and i.state == "closed"]
    closed = sorted(closed, key=lambda i: (i.created_at, i.number), reverse=True)[:window]
    found = examined = 0
    with Progress("read").start(None) as progress:  # the history of each closed issue
        for issue in closed:
            if found >= limit:
                break
            full = fetch(issue)
            examined += 1
            wanted = qualifies(memory, full, labels, bot_login, again)
            if wanted and not assistant_touched(full, bot_login):
                found += 1
            progress.advance(note=f"closed issues, {found} of {limit} wanted qualify")
    for issue in list(memory.by_number.values()):
        for number in (issue.duplicate_of or 0, *again.get(issue.number, ())):
            original = memory.by_number.get(number)
            if original is not None and original.events is None:
                fetch(original)
    issues = list(memory.by_number.values())
    releases, discussions, includes = _context(gh) if with_context else ([], [], [])
    repo = repository.model_copy(
        update={"maintainers": _maintainers(issues, roles), "includes": includes}
    )
    return Snapshot(repo, issues, releases=releases, discussions=discussions), examined


def _context(gh: GitHubTracker) -> tuple[list, list, list[str]]:
    """Every release (the replays reach back past GitHub's first page) and every discussion,
    rewound per issue like the issues; what cannot be read stays unknown, as in the Action."""
    from issue_assistant.errors import GitHubError
    from issue_assistant.tracker.github_context import list_releases

    includes: list[str] = []
    releases: list = []
    try:
        releases = list_releases(gh)
        includes.append("releases")
    except GitHubError as exc:
        log.warning("releases unknown: %s", exc)
    discussions = gh.discussions()
    if discussions is not None:
        includes.append("discussions")
    return releases, discussions or [], includes
