"""The REST and GraphQL client of one GitHub repository, over PyGithub: no tracker logic.

Every request goes through PyGithub's `Requester` (auth, throttling, `GithubRetry` bounded by
`BoundedRetry`); lists are `PaginatedList`s of a raw object class whose `raw_data` never triggers
a request (reading `raw_data` on PyGithub's own `Issue` from a list fetches the issue again).
Whatever PyGithub, urllib3 or requests raise comes out of `api` as one `GitHubError` that says
what was tried and what to do. The tracker (`tracker/github_tracker.py`) and the live stores read
through this surface: `api`, `request`, `paginate`, `requester` and `path`.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote

import requests
from github import Auth, Github, GithubException, GithubRetry
from github.GithubException import RateLimitExceededExceedsMaxWait
from github.GithubObject import NonCompletableGithubObject
from github.PaginatedList import PaginatedList
from urllib3.exceptions import ConnectTimeoutError, NameResolutionError, NewConnectionError
from urllib3.util.retry import Retry

from issue_assistant.errors import (
    NO_TOKEN,
    NOT_FOUND_HINT,
    GitHubError,
    RepositoryNotFound,
    UserError,
)
from issue_assistant.settings import token_source

log = logging.getLogger(__name__)
# PyGithub adds its own stderr handler to the "github" logger when imported: with ours (the
# CLI's root handler, the Action's) every line of it came out twice.
logging.getLogger("github").handlers.clear()
logging.getLogger("github").setLevel(logging.NOTSET)  # and it logs at the level we chose


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


def error_message(exc: GithubException) -> str:
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


def text_message(text: str | None) -> str:
    try:
        data = json.loads(text or "{}")
    except ValueError:
        return (text or "error")[:200]
    return str(data.get("message") or "error") if isinstance(data, dict) else "error"


class GitHubClient:
    """Requests to one repository's REST API (and GraphQL) with our retries and errors."""

    def __init__(
        self,
        full_name: str,
        token: str,
        base_url: str | None = None,
        *,
        retry: Retry | None = None,
        throttle: Throttle | None = None,
        per_page: int = 100,
        timeout: int = 30,
    ) -> None:
        owner, _, name = full_name.partition("/")
        if not owner or not name or "/" in name:
            raise UserError(f"repository must be OWNER/NAME, not {full_name!r}")
        if not token:
            raise UserError(NO_TOKEN)
        throttle = throttle or Throttle()
        self.full_name = full_name
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
        self.requester = self._gh.requester
        self.base_url = base
        # Set where a write can happen (`live.connect(writes="live")`): errors then say whether
        # anything was written; on a read-only command they say nothing of writes.
        self.live_writes = False
        self._wrote = False
        self.path = f"/repos/{quote(owner, safe='')}/{quote(name, safe='')}"

    @contextlib.contextmanager
    def api(self, method: str, path: str) -> Iterator[None]:
        """Turn whatever PyGithub, urllib3 or requests raise into one `GitHubError` that says
        what was tried and what to do; a write that succeeded is remembered."""
        self.record.reset()
        try:
            yield
        except RateLimitExceededExceedsMaxWait as exc:
            until = datetime.now(UTC) + timedelta(seconds=exc.wait or 0)
            message = (
                f"{error_message(exc)} (the reset is {exc.wait or 0:.0f} s away, at "
                f"{until:%H:%M} UTC: over the wait allowed)"
            )
            raise self._error(method, path, exc.status, message, exc.data) from exc
        except GithubException as exc:
            message = error_message(exc) + self.record.tried()
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
        if status == 404 and path in (self.path, f"{self.path}/issues", f"{self.path}/labels"):
            return RepositoryNotFound(self.full_name, method, path, message)
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
        if status in (403, 429) and "rate limit" in message.lower():
            return self._spent()
        if status == 403 and "rate limit" not in message.lower():
            return (
                "The token may not do this: a workflow's job needs `permissions: issues: "
                "write` (and `contents: read`); a personal token needs Issues read and write"
            )
        if status == 404 and (path == self.path or path.rsplit("/", 1)[0] == self.path):
            return f"{self.full_name}: {NOT_FOUND_HINT}"
        return ""

    def _spent(self) -> str:
        """What to do when the hourly budget is spent: when it resets, and the next step."""
        reset = self.requester.rate_limiting_resettime
        when = (
            f"at {datetime.fromtimestamp(reset, UTC):%H:%M} UTC"
            if reset and reset > 0
            else "within the hour"
        )
        return (
            f"GitHub's hourly limit resets {when}: run the same command again after that "
            "(snapshot and backlog go on where they stopped, evaluate keeps the issues done), "
            "or use a personal token: 5,000 requests an hour (a workflow's GITHUB_TOKEN: 1,000)"
        )

    def request(self, method: str, path: str, body: Any = None, params: Any = None) -> Any:
        with self.api(method, path):
            _, data = self.requester.requestJsonAndCheck(method, path, params, input=body)
        return data

    def paginate(self, path: str, params: dict[str, Any] | None = None) -> Iterator[dict[str, Any]]:
        """Every item of a paginated list, following `Link` headers."""
        pages = PaginatedList(_Raw, self.requester, path, dict(params or {}))
        with self.api("GET", path):
            for item in pages:
                yield item.raw_data

    def rate_remaining(self) -> int | None:
        """Requests left this hour as GitHub's last answer said (`X-RateLimit-Remaining`), or
        None before any answer; asks nothing."""
        remaining = self.requester.rate_limiting[0]
        return remaining if remaining >= 0 else None
