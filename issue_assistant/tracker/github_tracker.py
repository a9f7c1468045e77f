"""The tracker on GitHub: GitHub's JSON read into our models, and guarded writes.

The requests go through the repository's client (`tracker/client.py`: PyGithub, retries,
errors); the live stores of releases and discussions (`github_context`, `fetch_live`) read
through the same client.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from urllib3.util.retry import Retry

from issue_assistant.errors import GitHubError
from issue_assistant.tracker.client import (
    GitHubClient,
    Throttle,
    text_message,
)
from issue_assistant.tracker.github_context import list_releases
from issue_assistant.tracker.models import (
    Claim,
    Comment,
    Discussion,
    Event,
    Issue,
    LabelInfo,
    Reaction,
    Release,
    Repository,
    User,
)

log = logging.getLogger(__name__)

DEFAULT_BOT_LOGIN = "github-actions[bot]"
WRITE_ROLES = frozenset({"admin", "maintain", "write"})
TRIAGE_ROLES = WRITE_ROLES | {"triage"}
HISTORY_EVENTS = frozenset(
    {
        "labeled",
        "unlabeled",
        "closed",
        "reopened",
        "marked_as_duplicate",
        "unmarked_as_duplicate",
        "renamed",  # the title as of a moment (`tracker.asof.title_at`)
    }
)
GHOST = User(login="ghost")
RELEASES_PAGE = 30  # a live run reads the newest releases only: one request
# The original of an issue marked as a duplicate with GitHub's button: the REST timeline does
# not name it, GraphQL's MarkedAsDuplicateEvent.canonical does.
CANONICAL_QUERY = """
query($owner: String!, $name: String!, $number: Int!) {
  repository(owner: $owner, name: $name) {
    issue(number: $number) {
      timelineItems(itemTypes: [MARKED_AS_DUPLICATE_EVENT, UNMARKED_AS_DUPLICATE_EVENT], last: 20) {
        nodes {
          __typename
          ... on MarkedAsDuplicateEvent {
            createdAt
            canonical { __typename ... on Issue { number } ... on PullRequest { number } }
          }
          ... on UnmarkedAsDuplicateEvent { createdAt }
        }
      }
    }
  }
}
""".strip()


def to_user(data: dict[str, Any] | None) -> User | None:
    if not data:
        return None
    return User(login=data["login"], type=data.get("type") or "User")


def to_issue(data: dict[str, Any]) -> Issue:
    """An issue or pull request from the issues endpoint (events and comments unknown)."""
    return Issue(
        number=data["number"],
        title=data.get("title") or "",
        body=data.get("body"),
        user=to_user(data.get("user")) or GHOST,
        author_association=data.get("author_association"),
        created_at=data["created_at"],
        closed_at=data.get("closed_at"),
        state=data.get("state", "open"),
        state_reason=data.get("state_reason"),
        labels=[lb["name"] if isinstance(lb, dict) else str(lb) for lb in data.get("labels", [])],
        is_pull_request=data.get("pull_request") is not None,
        updated_at=data.get("updated_at"),
        locked=True if data.get("locked") else None,
    )


def to_comment(data: dict[str, Any], *, edited: bool = True) -> Comment:
    """A comment; `edited=False` leaves out `updated_at` (snapshots do not keep it)."""
    return Comment(
        id=data.get("id"),
        user=to_user(data.get("user")) or GHOST,
        created_at=data["created_at"],
        body=data.get("body") or "",
        author_association=data.get("author_association"),
        url=data.get("html_url"),
        updated_at=data.get("updated_at") if edited else None,
    )


def to_event(data: dict[str, Any]) -> Event:
    label = data.get("label")
    rename = data.get("rename") if isinstance(data.get("rename"), dict) else {}
    return Event(
        event=data["event"],
        created_at=data["created_at"],
        actor=to_user(data.get("actor")),
        label=label.get("name") if isinstance(label, dict) else None,
        state_reason=data.get("state_reason"),
        rename_from=rename.get("from") if isinstance(rename.get("from"), str) else None,
        rename_to=rename.get("to") if isinstance(rename.get("to"), str) else None,
    )


def split_timeline(items: list[dict[str, Any]]) -> tuple[list[Event], list[Comment]]:
    """The history events and the comments (`commented` items) of a timeline."""
    events = [
        to_event(i) for i in items if i.get("event") in HISTORY_EVENTS and i.get("created_at")
    ]
    comments = [to_comment(i, edited=False) for i in items if i.get("event") == "commented"]
    return events, comments


def canonical_from(data: dict[str, Any]) -> int | None:
    """The canonical issue of the last MarkedAsDuplicateEvent not undone by a later unmark."""
    issue = ((data.get("data") or {}).get("repository") or {}).get("issue") or {}
    nodes = (issue.get("timelineItems") or {}).get("nodes") or []
    found: int | None = None
    for node in sorted((n for n in nodes if n), key=lambda n: n.get("createdAt") or ""):
        if node.get("__typename") == "MarkedAsDuplicateEvent":
            canonical = node.get("canonical") or {}
            found = canonical.get("number") if canonical.get("__typename") == "Issue" else None
        elif node.get("__typename") == "UnmarkedAsDuplicateEvent":
            found = None
    return found


def _transient(exc: GitHubError) -> bool:
    """No answer, or a server error: the write may or may not have happened."""
    return exc.status is None or exc.status >= 500


class GitHubTracker(GitHubClient):
    """`Tracker` and `WritableTracker` for one repository on GitHub (or a server at `base_url`):
    the issues, releases and discussions read into our models, and the guarded writes, over the
    REST/GraphQL client it is (`tracker/client.py`)."""

    def __init__(
        self,
        full_name: str,
        token: str,
        base_url: str | None = None,
        *,
        bot_login: str = DEFAULT_BOT_LOGIN,
        retry: Retry | None = None,
        throttle: Throttle | None = None,
        per_page: int = 100,
        timeout: int = 30,
    ) -> None:
        super().__init__(
            full_name,
            token,
            base_url,
            retry=retry,
            throttle=throttle,
            per_page=per_page,
            timeout=timeout,
        )
        self.bot_login = bot_login
        self._repository: Repository | None = None
        self._roles: dict[str, str] = {}
        self._known: dict[str, Any] = {}  # releases and discussions, read once per run
        self._discussion_store: Path | None = None

    # ---- reads -----------------------------------------------------------------------------

    @property
    def repository(self) -> Repository:
        """The repository and its labels (fetched once); `maintainers` is None (unknown)."""
        if self._repository is None:
            data = self.request("GET", self.path)
            labels = [
                LabelInfo(name=lb["name"], description=lb.get("description"), color=lb.get("color"))
                for lb in self.paginate(f"{self.path}/labels")
            ]
            self._repository = Repository(
                full_name=data.get("full_name") or self.full_name,
                fetched_at=datetime.now(UTC).replace(microsecond=0),
                labels=labels,
            )
        return self._repository

    @property
    def point_in_time(self) -> None:
        return None

    def get_issue(self, number: int, *, history: bool = False) -> Issue:
        """Issue or PR `number` (KeyError when there is none); with its events and comments if
        `history`."""
        path = f"{self.path}/issues/{number}"
        try:
            data = self.request("GET", path)
        except GitHubError as exc:
            if exc.status in (404, 410):  # deleted (410), or never there
                raise KeyError(number) from exc
            raise
        try:
            if not self.ours(data, number):  # transferred: GitHub answers from the new place
                raise KeyError(number)
            issue = to_issue(data)
        except KeyError as exc:
            if exc.args == (number,):
                raise
            what = f"an answer that is not an issue (no {exc})"
            raise GitHubError("GET", path, None, what) from None
        except (AttributeError, TypeError, ValueError) as exc:  # not a KeyError: it is there
            what = f"an answer that is not an issue ({type(exc).__name__}: {exc})"[:200]
            raise GitHubError("GET", path, None, what) from None
        if history:
            events, comments = self.history(number)
            issue = issue.model_copy(update={"events": events, "comments": comments})
        return issue

    def ours(self, data: Any, number: int) -> bool:
        """Whether an answer for issue `number` is that issue of this repository (an issue
        transferred since is answered from its new repository, under another number)."""
        if data.get("number") != number:
            return False
        where = str(data.get("repository_url") or "")
        return not where or where.rstrip("/").lower().endswith("/repos/" + self.full_name.lower())

    def history(self, number: int) -> tuple[list[Event], list[Comment]]:
        """The issue's label/close/duplicate events and its comments, from its timeline."""
        return split_timeline(list(self.paginate(f"{self.path}/issues/{number}/timeline")))

    def duplicate_canonical(self, number: int) -> int | None:
        """The original issue `number` was last marked a duplicate of (GraphQL), unless unmarked
        since; None when there is none or it is in another repository."""
        owner, _, name = self.full_name.partition("/")
        variables = {"owner": owner, "name": name, "number": number}
        with self.api("POST", "/graphql"):
            _, data = self.requester.graphql_query(CANONICAL_QUERY, variables)
        return canonical_from(data)

    def all_issues(self, since: datetime | None = None, sort: str = "created") -> Iterator[Issue]:
        """Every issue and pull request, oldest first; with `since`, only those updated since.

        `sort="updated"` lists the least recently updated first (a listing that can resume)."""
        params: dict[str, Any] = {"state": "all", "sort": sort, "direction": "asc"}
        if since is not None:
            params["since"] = since.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        for data in self.paginate(f"{self.path}/issues", params):
            yield to_issue(data)

    def issues_with_label(self, label: str, state: str = "open") -> list[Issue]:
        """Issues and pull requests carrying `label` (open, closed or all), oldest first."""
        params = {"state": state, "labels": label, "sort": "created", "direction": "asc"}
        return [to_issue(d) for d in self.paginate(f"{self.path}/issues", params)]

    def list_comments(self, number: int) -> list[Comment]:
        return [to_comment(d) for d in self.paginate(f"{self.path}/issues/{number}/comments")]

    def comment_reactions(self, comment_id: int) -> list[Reaction]:
        path = f"{self.path}/issues/comments/{comment_id}/reactions"
        return [
            Reaction(
                user=to_user(d.get("user")) or GHOST,
                content=d["content"],
                created_at=d.get("created_at"),
                id=d.get("id"),
            )
            for d in self.paginate(path)
        ]

    def permission(self, login: str) -> str:
        """`login`'s exact role (`role_name`): admin, maintain, write, triage, read or none."""
        if login not in self._roles:
            path = f"{self.path}/collaborators/{quote(login, safe='')}/permission"
            try:
                data = self.request("GET", path)
            except GitHubError as exc:
                if exc.status != 404:
                    raise
                data = {"role_name": "none"}
            self._roles[login] = str(data.get("role_name") or data.get("permission") or "none")
        return self._roles[login]

    def rate_reset(self) -> datetime | None:
        """When the hourly rate limit resets, as GitHub's last answer said
        (`X-RateLimit-Reset`), or None before any answer; asks nothing."""
        reset = self.requester.rate_limiting_resettime
        return datetime.fromtimestamp(reset, UTC) if reset and reset > 0 else None

    # ---- the repository beside its issues -------------------------------------------------

    def keep_discussions(self, path: Path | None) -> None:
        """Keep the discussions in the file `path` between runs: then only what changed since
        the last run is fetched (`tracker.fetch_live`)."""
        self._discussion_store = path

    def releases(self) -> list[Release] | None:
        """The newest releases (GitHub's first page, one request), newest first; None when they
        cannot be read (no access), which the context shows as unknown."""
        if "releases" not in self._known:
            try:
                self._known["releases"] = list_releases(self, first_page=RELEASES_PAGE)
            except GitHubError as exc:
                log.warning("releases unknown: %s", exc)
                self._known["releases"] = None
        return self._known["releases"]

    def discussions(self) -> list[Discussion] | None:
        """Every discussion, oldest first ([] where they are off); None when they cannot be
        read (GraphQL refused, no access). Synced once per run with the kept file, if any."""
        if "discussions" not in self._known:
            from issue_assistant.tracker.fetch_live import DiscussionStore

            store = DiscussionStore.load(self._discussion_store)
            try:
                store.sync(self)
            except GitHubError as exc:
                log.warning("discussions unknown: %s", exc)
                self._known["discussions"] = None
                return None
            store.save()
            self._known["discussions"] = store.discussions()
        return self._known["discussions"]

    # ---- writes ----------------------------------------------------------------------------

    def add_labels(self, number: int, labels: list[str]) -> None:
        if not labels:
            return
        # adding twice is harmless
        self._post_again_if_lost(f"{self.path}/issues/{number}/labels", {"labels": list(labels)})

    def remove_label(self, number: int, label: str) -> None:
        """Remove `label`; a label that is not there (404) is fine."""
        self._delete_if_there(f"{self.path}/issues/{number}/labels/{quote(label, safe='')}")

    def create_comment(self, number: int, body: str) -> Comment:
        """Post a comment; after a lost answer, looks for it before posting once more."""
        path = f"{self.path}/issues/{number}/comments"
        try:
            return to_comment(self.request("POST", path, {"body": body}))
        except GitHubError as exc:
            if not _transient(exc):
                raise
        mine = [
            c
            for c in self.list_comments(number)
            if c.user.login == self.bot_login and c.body == body
        ]
        if mine:
            return mine[-1]
        return to_comment(self.request("POST", path, {"body": body}))

    def edit_comment(self, comment_id: int, body: str) -> None:
        self.request("PATCH", f"{self.path}/issues/comments/{comment_id}", {"body": body})

    def delete_comment(self, comment_id: int) -> None:
        """Delete a comment; one already gone (404) is fine."""
        self._delete_if_there(f"{self.path}/issues/comments/{comment_id}")

    def add_reaction(self, comment_id: int, content: str) -> None:
        """React to a comment (GitHub keeps one reaction per user and content)."""
        path = f"{self.path}/issues/comments/{comment_id}/reactions"
        self._post_again_if_lost(path, {"content": content})

    def claim(self, comment_id: int) -> Claim:
        """React 👀: GitHub answers 201 when it made the reaction, 200 when it was there.

        After a lost answer the reaction is asked for again; a 200 then is taken as this run's
        own (two runs at once and a lost answer together are not told apart).
        """
        path = f"{self.path}/issues/comments/{comment_id}/reactions"
        lost = False
        for _ in range(2):
            try:
                with self.api("POST", path):
                    status, _, text = self.requester.requestJson(
                        "POST", path, input={"content": "eyes"}
                    )
                if status not in (200, 201):
                    raise GitHubError("POST", path, status, text_message(text))
                data = json.loads(text or "{}")
                return Claim(
                    id=data["id"], new=status == 201 or lost, created_at=data.get("created_at")
                )
            except GitHubError as exc:
                if not _transient(exc) or lost:
                    raise
                lost = True
        raise AssertionError("unreachable")

    def release(self, comment_id: int, claim_id: int) -> None:
        self._delete_if_there(f"{self.path}/issues/comments/{comment_id}/reactions/{claim_id}")

    def _post_again_if_lost(self, path: str, body: dict) -> None:
        """POST `body`, once more after a lost answer (for writes that are harmless twice)."""
        try:
            self.request("POST", path, body)
        except GitHubError as exc:
            if not _transient(exc):
                raise
            self.request("POST", path, body)

    def _delete_if_there(self, path: str) -> None:
        """DELETE `path`; what is already gone (404) is fine."""
        try:
            self.request("DELETE", path)
        except GitHubError as exc:
            if exc.status != 404:
                raise

    def close(self, number: int, state_reason: str) -> None:
        """Close with `state_reason`: completed, not_planned or duplicate."""
        body = {"state": "closed", "state_reason": state_reason}
        self.request("PATCH", f"{self.path}/issues/{number}", body)

    # ---- for `init` ------------------------------------------------------------------------

    def metadata(self) -> dict[str, Any]:
        """The repository's own record (description, default branch, ...)."""
        return self.request("GET", self.path)

    def readme(self) -> dict[str, Any]:
        """The README's record (`content` is base64); GitHubError 404 when there is none."""
        return self.request("GET", f"{self.path}/readme")

    def recent_issues(self) -> Iterator[Issue]:
        """Issues and pull requests, newest first (to count label use on the recent ones)."""
        params = {"state": "all", "sort": "created", "direction": "desc"}
        for data in self.paginate(f"{self.path}/issues", params):
            yield to_issue(data)
