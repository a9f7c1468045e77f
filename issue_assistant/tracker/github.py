"""The tracker on GitHub, over PyGithub: GitHub's JSON read into our models, guarded writes.

Every request goes through PyGithub's `Requester` (auth, throttling, `GithubRetry`); lists are
`PaginatedList`s of a raw object class whose `raw_data` never triggers a request (reading
`raw_data` on PyGithub's own `Issue` from a list fetches the issue again).
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

import requests
from github import Auth, Github, GithubException, GithubRetry
from github.GithubException import RateLimitExceededExceedsMaxWait
from github.GithubObject import NonCompletableGithubObject
from github.PaginatedList import PaginatedList
from urllib3.exceptions import ConnectTimeoutError, NameResolutionError, NewConnectionError
from urllib3.util.retry import Retry

from issue_assistant.errors import NOT_FOUND_HINT, GitHubError, UserError
from issue_assistant.settings import token_source
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
# PyGithub adds its own stderr handler to the "github" logger when imported: with ours (the
# CLI's root handler, the Action's) every line of it came out twice.
logging.getLogger("github").handlers.clear()
logging.getLogger("github").setLevel(logging.NOTSET)  # and it logs at the level we chose

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


@dataclass(frozen=True)
class Throttle:
    """Seconds PyGithub keeps between requests and between writes (GitHub asks for 1 s)."""

    between_requests: float = 0.25
    between_writes: float = 1.0


class WaitTooLong(Exception):
    """Retrying would wait past the retry policy's bound on total waiting."""

    def __init__(self, status: int | None, wait: float, waited: float, bound: float) -> None:
        self.status = status
        super().__init__(
            f"rate limited or failing: retrying needs {wait:.0f} s more after {waited:.0f} s, "
            f"over the {bound:.0f} s allowed"
        )


#: a wait this long is said (on the progress bar, else as a warning): GitHub's rate limit
LONG_WAIT = 10.0


class RetryRecord:
    """What the retries of the request under way did (for the error line: what was tried), and
    whom to tell of a long wait (`on_wait(seconds, until, why)`; else a warning is logged)."""

    def __init__(self) -> None:
        self.retries = 0
        self.waited = 0.0
        self.on_wait: Callable[[float, datetime, str], None] | None = None

    def reset(self) -> None:
        self.retries, self.waited = 0, 0.0

    def tried(self) -> str:
        """ " (tried 3 times over 14 s)", or "" when the first answer was the last."""
        if not self.retries:
            return ""
        return f" (tried {self.retries + 1} times over {self.waited:.0f} s)"

    def waiting(self, seconds: float, why: str) -> None:
        self.retries += 1
        self.waited += seconds
        if seconds < LONG_WAIT:
            log.debug("GitHub: %s; retrying in %.1f s", why, seconds)
            return
        until = datetime.now(UTC) + timedelta(seconds=seconds)
        if self.on_wait is not None:
            self.on_wait(seconds, until, why)
        else:
            log.warning(
                "GitHub: %s; waiting %.0f s, until %s UTC (Ctrl-C to stop)",
                why,
                seconds,
                until.strftime("%H:%M:%S"),
            )


def _why(response: Any) -> str:
    """What GitHub answered that is being waited out, in words."""
    status = getattr(response, "status", None)
    if status is None:
        return "no answer"
    headers = getattr(response, "headers", {}) or {}
    if status in (403, 429) and headers.get("X-RateLimit-Remaining") == "0":
        return f"rate limit reached ({status}), the wait is until its reset"
    if status in (403, 429):
        return f"secondary rate limit ({status})"
    return f"answered {status}"


class BoundedRetry(GithubRetry):
    """`GithubRetry` with a bound on the total time slept over one request's retries.

    A POST is retried only on a rate limit (403/429: GitHub did nothing), never on 5xx or a
    dropped connection, since the write may have happened; callers look before they post again.
    A refused connection, a name that does not resolve or a connect timeout is never retried
    (`connect=0`): no server there will answer a few seconds later. Every wait is told to
    `record` (a long one is shown, with the time it ends).
    """

    def __init__(
        self,
        *,
        max_total_wait: float = 300.0,
        waited: float = 0.0,
        record: RetryRecord | None = None,
        **kwargs: Any,
    ):
        self.max_total_wait = max_total_wait
        self.waited = waited
        self.record = record
        super().__init__(**kwargs)

    def new(self, **kw: Any) -> BoundedRetry:
        kw.setdefault("record", self.record)
        kw.update(max_total_wait=self.max_total_wait, waited=self.waited)
        return super().new(**kw)  # type: ignore[return-value]

    def is_retry(self, method: str, status_code: int, has_retry_after: bool = False) -> bool:
        if method == "POST" and status_code in (403, 429):
            method = "GET"
        return super().is_retry(method, status_code, has_retry_after)

    def sleep(self, response: Any = None) -> None:
        wait = None
        if self.respect_retry_after_header and response is not None:
            wait = self.get_retry_after(response)
        if not wait:
            wait = self.get_backoff_time()
        if self.waited + wait > self.max_total_wait:
            status = getattr(response, "status", None)
            raise WaitTooLong(status, wait, self.waited, self.max_total_wait)
        self.waited += wait
        if self.record is not None:
            self.record.waiting(wait, _why(response))
        super().sleep(response)


def github_retry(
    *,
    total: int = 8,
    max_wait: float = 300.0,
    backoff_factor: float = 1.0,
    secondary_rate_wait: float = 60.0,
) -> BoundedRetry:
    """The retry policy: 5xx, 429 and rate-limit 403s retried, `max_wait` seconds at most in all;
    a failed connection never, a dropped answer to a read twice."""
    return BoundedRetry(
        total=total,
        connect=0,
        read=2,
        backoff_factor=backoff_factor,
        max_total_wait=max_wait,
        max_rate_limit_wait=max_wait,
        secondary_rate_wait=secondary_rate_wait,
        status_forcelist=[*range(500, 600), 429],
        allowed_methods=frozenset({"GET", "HEAD", "PUT", "PATCH", "DELETE", "OPTIONS"}),
        raise_on_status=False,
    )


class _Raw(NonCompletableGithubObject):
    """A list item kept as GitHub's JSON; `raw_data` is a plain attribute read."""

    def _initAttributes(self) -> None:
        pass

    def _useAttributes(self, attributes: dict[str, Any]) -> None:
        pass


# ---- conversions from GitHub's JSON --------------------------------------------------------


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


def _message(exc: GithubException) -> str:
    data = exc.data
    if not isinstance(data, dict):
        return str(data or exc.message or "error")
    message = str(data.get("message") or exc.message or "error")
    details = []
    for err in data.get("errors") or []:
        if isinstance(err, dict):
            details.append(
                err.get("message")
                or " ".join(str(err[k]) for k in ("resource", "field", "code") if err.get(k))
            )
        else:
            details.append(str(err))
    return f"{message} ({'; '.join(details)})" if details else message


def _text_message(text: str | None) -> str:
    try:
        data = json.loads(text or "{}")
    except ValueError:
        return (text or "error")[:200]
    return str(data.get("message") or "error") if isinstance(data, dict) else "error"


def _transient(exc: GitHubError) -> bool:
    """No answer, or a server error: the write may or may not have happened."""
    return exc.status is None or exc.status >= 500


class GitHubTracker:
    """`Tracker` and `WritableTracker` for one repository on GitHub (or a server at `base_url`)."""

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
        owner, _, name = full_name.partition("/")
        if not owner or not name or "/" in name:
            raise UserError(f"repository must be OWNER/NAME, not {full_name!r}")
        if not token:
            raise UserError("a GitHub token is needed (set GITHUB_TOKEN)")
        throttle = throttle or Throttle()
        self.full_name = full_name
        self.bot_login = bot_login
        base = (base_url or "https://api.github.com").rstrip("/")
        if not re.match(r"https?://[^/\s]+", base):
            raise UserError(f"the GitHub API URL must start with https:// or http://, not {base!r}")
        self.record = RetryRecord()  # what the retries of the request under way did
        retry = retry if retry is not None else github_retry()
        if isinstance(retry, BoundedRetry):
            retry = retry.new(record=self.record)
        self._gh = Github(
            base_url=base,
            auth=Auth.Token(token),
            retry=retry,
            per_page=per_page,
            timeout=timeout,
            user_agent="issue-assistant",
            seconds_between_requests=throttle.between_requests or None,
            seconds_between_writes=throttle.between_writes or None,
        )
        self._requester = self._gh.requester
        self.base_url = base
        # Set where a write can happen (`live.connect(writes="live")`): errors then say whether
        # anything was written; on a read-only command they say nothing of writes.
        self.live_writes = False
        self._wrote = False
        self._path = f"/repos/{quote(owner, safe='')}/{quote(name, safe='')}"
        self._repository: Repository | None = None
        self._roles: dict[str, str] = {}
        self._known: dict[str, Any] = {}  # releases and discussions, read once per run
        self._discussion_store: Path | None = None

    # ---- plumbing --------------------------------------------------------------------------

    @contextlib.contextmanager
    def _api(self, method: str, path: str) -> Iterator[None]:
        """Turn whatever PyGithub, urllib3 or requests raise into one `GitHubError` that says
        what was tried and what to do; a write that succeeded is remembered."""
        self.record.reset()
        try:
            yield
        except RateLimitExceededExceedsMaxWait as exc:
            until = datetime.now(UTC) + timedelta(seconds=exc.wait or 0)
            message = (
                f"{_message(exc)} (the reset is {exc.wait or 0:.0f} s away, at "
                f"{until:%H:%M} UTC: over the wait allowed)"
            )
            raise self._error(method, path, exc.status, message, exc.data) from exc
        except GithubException as exc:
            message = _message(exc) + self.record.tried()
            raise self._error(method, path, exc.status, message, exc.data) from exc
        except WaitTooLong as exc:
            raise self._error(method, path, exc.status, str(exc)) from exc
        except requests.RequestException as exc:
            raise self._error(method, path, None, self._no_answer(exc)) from exc
        if method != "GET" and path != "/graphql":
            self._wrote = True

    def _no_answer(self, exc: requests.RequestException) -> str:
        """Why there was no answer, in words, and what was tried."""
        reason: Any = exc.args[0] if exc.args else exc
        reason = getattr(reason, "reason", reason)  # urllib3's MaxRetryError wraps the cause
        if isinstance(reason, NameResolutionError):
            what = "the host name does not resolve"
        elif isinstance(reason, NewConnectionError) and "refused" in str(reason).lower():
            what = "connection refused"
        elif isinstance(reason, (ConnectTimeoutError, NewConnectionError)):
            what = "could not connect"
        elif isinstance(exc, requests.Timeout):
            what = "no answer in time"
        else:
            what = f"the connection failed ({type(exc).__name__})"
        if isinstance(reason, NewConnectionError | ConnectTimeoutError):
            return f"cannot reach {self.base_url}: {what}; tried once (not retried)"
        return f"no answer from {self.base_url}: {what}{self.record.tried()}"

    def _error(
        self, method: str, path: str, status: int | None, message: str, data: Any = None
    ) -> GitHubError:
        """The error with its hint (what to do) and, where a write could have happened, what
        was written."""
        consequence = ""
        if self.live_writes or self._wrote:
            consequence = "nothing more was written" if self._wrote else "nothing was written"
        return GitHubError(
            method,
            path,
            status,
            message,
            data=data,
            hint=self._hint(method, path, status, message),
            consequence=consequence,
        )

    def _hint(self, method: str, path: str, status: int | None, message: str) -> str:
        if status is None and "cannot reach" in message:
            return "Check GITHUB_API_URL (or --base-url) and the network"
        if status == 401:
            return (
                f"The token from {token_source()} was refused (wrong, expired or revoked): "
                "give a valid one; it needs read access to the repository's issues "
                "(fine-grained: Issues and Metadata read, Issues write to post; classic: "
                "`repo`, or `public_repo` for a public repository)"
            )
        if status == 403 and "rate limit" not in message.lower():
            return (
                "The token may not do this: a workflow's job needs `permissions: issues: "
                "write` (and `contents: read`); a personal token needs Issues read and write"
            )
        if status == 404 and (path == self._path or path.rsplit("/", 1)[0] == self._path):
            return f"{self.full_name}: {NOT_FOUND_HINT}"
        return ""

    def _request(self, method: str, path: str, body: Any = None, params: Any = None) -> Any:
        with self._api(method, path):
            _, data = self._requester.requestJsonAndCheck(method, path, params, input=body)
        return data

    def _list(self, path: str, params: dict[str, Any] | None = None) -> Iterator[dict[str, Any]]:
        """Every item of a paginated list, following `Link` headers."""
        pages = PaginatedList(_Raw, self._requester, path, dict(params or {}))
        with self._api("GET", path):
            for item in pages:
                yield item.raw_data

    def rate_remaining(self) -> int | None:
        """Requests left this hour as GitHub's last answer said (`X-RateLimit-Remaining`), or
        None before any answer; asks nothing."""
        remaining = self._requester.rate_limiting[0]
        return remaining if remaining >= 0 else None

    # ---- reads -----------------------------------------------------------------------------

    @property
    def repository(self) -> Repository:
        """The repository and its labels (fetched once); `maintainers` is None (unknown)."""
        if self._repository is None:
            data = self._request("GET", self._path)
            labels = [
                LabelInfo(name=lb["name"], description=lb.get("description"), color=lb.get("color"))
                for lb in self._list(f"{self._path}/labels")
            ]
            self._repository = Repository(
                full_name=data.get("full_name") or self.full_name,
                fetched_at=datetime.now(UTC).replace(microsecond=0),
                labels=labels,
            )
        return self._repository

    def get_issue(self, number: int, *, history: bool = False) -> Issue:
        """Issue or PR `number` (KeyError when there is none); with its events and comments if
        `history`."""
        path = f"{self._path}/issues/{number}"
        try:
            issue = to_issue(self._request("GET", path))
        except GitHubError as exc:
            if exc.status in (404, 410):
                raise KeyError(number) from exc
            raise
        if history:
            events, comments = self.history(number)
            issue = issue.model_copy(update={"events": events, "comments": comments})
        return issue

    def history(self, number: int) -> tuple[list[Event], list[Comment]]:
        """The issue's label/close/duplicate events and its comments, from its timeline."""
        return split_timeline(list(self._list(f"{self._path}/issues/{number}/timeline")))

    def duplicate_canonical(self, number: int) -> int | None:
        """The original issue `number` was last marked a duplicate of (GraphQL), unless unmarked
        since; None when there is none or it is in another repository."""
        owner, _, name = self.full_name.partition("/")
        variables = {"owner": owner, "name": name, "number": number}
        with self._api("POST", "/graphql"):
            _, data = self._requester.graphql_query(CANONICAL_QUERY, variables)
        return canonical_from(data)

    def all_issues(self, since: datetime | None = None, sort: str = "created") -> Iterator[Issue]:
        """Every issue and pull request, oldest first; with `since`, only those updated since.

        `sort="updated"` lists the least recently updated first (a listing that can resume)."""
        params: dict[str, Any] = {"state": "all", "sort": sort, "direction": "asc"}
        if since is not None:
            params["since"] = since.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        for data in self._list(f"{self._path}/issues", params):
            yield to_issue(data)

    def issues_with_label(self, label: str, state: str = "open") -> list[Issue]:
        """Issues and pull requests carrying `label` (open, closed or all), oldest first."""
        params = {"state": state, "labels": label, "sort": "created", "direction": "asc"}
        return [to_issue(d) for d in self._list(f"{self._path}/issues", params)]

    def list_comments(self, number: int) -> list[Comment]:
        return [to_comment(d) for d in self._list(f"{self._path}/issues/{number}/comments")]

    def comment_reactions(self, comment_id: int) -> list[Reaction]:
        path = f"{self._path}/issues/comments/{comment_id}/reactions"
        return [
            Reaction(
                user=to_user(d.get("user")) or GHOST,
                content=d["content"],
                created_at=d.get("created_at"),
                id=d.get("id"),
            )
            for d in self._list(path)
        ]

    def permission(self, login: str) -> str:
        """`login`'s exact role (`role_name`): admin, maintain, write, triage, read or none."""
        if login not in self._roles:
            path = f"{self._path}/collaborators/{quote(login, safe='')}/permission"
            try:
                data = self._request("GET", path)
            except GitHubError as exc:
                if exc.status != 404:
                    raise
                data = {"role_name": "none"}
            self._roles[login] = str(data.get("role_name") or data.get("permission") or "none")
        return self._roles[login]

    def rate_reset(self) -> datetime | None:
        """When the hourly rate limit resets, as GitHub's last answer said
        (`X-RateLimit-Reset`), or None before any answer; asks nothing."""
        reset = self._requester.rate_limiting_resettime
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
        path = f"{self._path}/issues/{number}/labels"
        try:
            self._request("POST", path, {"labels": list(labels)})
        except GitHubError as exc:
            if not _transient(exc):
                raise
            self._request("POST", path, {"labels": list(labels)})  # adding twice is harmless

    def remove_label(self, number: int, label: str) -> None:
        """Remove `label`; a label that is not there (404) is fine."""
        path = f"{self._path}/issues/{number}/labels/{quote(label, safe='')}"
        try:
            self._request("DELETE", path)
        except GitHubError as exc:
            if exc.status != 404:
                raise

    def create_comment(self, number: int, body: str) -> Comment:
        """Post a comment; after a lost answer, looks for it before posting once more."""
        path = f"{self._path}/issues/{number}/comments"
        try:
            return to_comment(self._request("POST", path, {"body": body}))
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
        return to_comment(self._request("POST", path, {"body": body}))

    def edit_comment(self, comment_id: int, body: str) -> None:
        self._request("PATCH", f"{self._path}/issues/comments/{comment_id}", {"body": body})

    def delete_comment(self, comment_id: int) -> None:
        """Delete a comment; one already gone (404) is fine."""
        try:
            self._request("DELETE", f"{self._path}/issues/comments/{comment_id}")
        except GitHubError as exc:
            if exc.status != 404:
                raise

    def add_reaction(self, comment_id: int, content: str) -> None:
        """React to a comment (GitHub keeps one reaction per user and content)."""
        path = f"{self._path}/issues/comments/{comment_id}/reactions"
        try:
            self._request("POST", path, {"content": content})
        except GitHubError as exc:
            if not _transient(exc):
                raise
            self._request("POST", path, {"content": content})

    def claim(self, comment_id: int) -> Claim:
        """React 👀: GitHub answers 201 when it made the reaction, 200 when it was there.

        After a lost answer the reaction is asked for again; a 200 then is taken as this run's
        own (two runs at once and a lost answer together are not told apart).
        """
        path = f"{self._path}/issues/comments/{comment_id}/reactions"
        lost = False
        for _ in range(2):
            try:
                with self._api("POST", path):
                    status, _, text = self._requester.requestJson(
                        "POST", path, input={"content": "eyes"}
                    )
                if status not in (200, 201):
                    raise GitHubError("POST", path, status, _text_message(text))
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
        path = f"{self._path}/issues/comments/{comment_id}/reactions/{claim_id}"
        try:
            self._request("DELETE", path)
        except GitHubError as exc:
            if exc.status != 404:
                raise

    def close(self, number: int, state_reason: str) -> None:
        """Close with `state_reason`: completed, not_planned or duplicate."""
        body = {"state": "closed", "state_reason": state_reason}
        self._request("PATCH", f"{self._path}/issues/{number}", body)

    # ---- for `init` ------------------------------------------------------------------------

    def metadata(self) -> dict[str, Any]:
        """The repository's own record (description, default branch, ...)."""
        return self._request("GET", self._path)

    def readme(self) -> dict[str, Any]:
        """The README's record (`content` is base64); GitHubError 404 when there is none."""
        return self._request("GET", f"{self._path}/readme")

    def recent_issues(self) -> Iterator[Issue]:
        """Issues and pull requests, newest first (to count label use on the recent ones)."""
        params = {"state": "all", "sort": "created", "direction": "desc"}
        for data in self._list(f"{self._path}/issues", params):
            yield to_issue(data)
