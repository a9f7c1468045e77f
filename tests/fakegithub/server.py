"""The fake GitHub REST server: HTTP on 127.0.0.1, failure injection and a request log."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from tests.fakegithub.endpoints import DEFAULT_MESSAGES, ApiError, Endpoints


@dataclass
class LoggedRequest:
    """One request as the server saw it; `status` is what it answered."""

    method: str
    path: str
    query: dict[str, str]
    body: Any
    status: int = 0


@dataclass
class Failure:
    """An injected failure: the next `times` matching requests get `status` (or a dropped line).

    With `apply=True` the request is carried out first (the write happens, the answer is lost).
    With `delay`, the answer (or the dropped line) waits that many seconds first (a timeout when
    it is longer than the client's); `status=0` with `apply=True` and a delay only delays.
    """

    method: str
    pattern: re.Pattern[str]
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None
    times: int = 1
    apply: bool = False
    disconnect: bool = False
    delay: float = 0.0

    def matches(self, method: str, path: str) -> bool:
        return self.method in ("*", method) and self.pattern.search(path) is not None


class FakeGitHub(Endpoints):
    """A stateful fake of the GitHub REST API for one repository, on 127.0.0.1.

    Use as a context manager or call `start()`/`stop()`. `base_url` is what PyGithub needs.
    """

    def __init__(
        self,
        full_name: str = "octo/repo",
        *,
        port: int = 0,
        token: str | None = None,
        viewer: str = "github-actions[bot]",
    ) -> None:
        super().__init__(full_name, viewer)
        self.port = port
        self.token = token
        self.requests: list[LoggedRequest] = []
        self.failures: list[Failure] = []
        self.hooks: list[tuple[str, re.Pattern[str], Callable[[], None]]] = []
        # GitHub's primary rate limit, when set (`limit_rate`): requests left and the reset time.
        self.rate_remaining: int | None = None
        self.rate_limit = 5000
        self.rate_reset = 1893456000
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ---- lifecycle -------------------------------------------------------------------------

    def start(self) -> FakeGitHub:
        handler = type("Handler", (_Handler,), {"fake": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", self.port), handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> FakeGitHub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- test-facing helpers ---------------------------------------------------------------

    def fail_next(
        self,
        method: str,
        path_regex: str,
        status: int = 500,
        headers: dict[str, str] | None = None,
        body: Any = None,
        times: int = 1,
        *,
        apply: bool = False,
        disconnect: bool = False,
        delay: float = 0.0,
    ) -> Failure:
        """Fail the next `times` requests matching `method` (or `*`) and the path regex."""
        failure = Failure(
            method.upper(),
            re.compile(path_regex),
            status,
            dict(headers or {}),
            body,
            times,
            apply,
            disconnect,
            delay,
        )
        with self.lock:
            self.failures.append(failure)
        return failure

    def fail_secondary_rate_limit(
        self, method: str, path_regex: str, retry_after: int = 1, times: int = 1
    ) -> Failure:
        """GitHub's secondary rate limit: 403 with `Retry-After`."""
        return self.fail_next(
            method, path_regex, 403, {"Retry-After": str(retry_after)}, times=times
        )

    def fail_primary_rate_limit(
        self, method: str, path_regex: str, reset_in: int = 3600
    ) -> Failure:
        """GitHub's primary rate limit: 403, remaining 0, reset in `reset_in` seconds."""
        reset = int(datetime.now().timestamp()) + reset_in
        headers = {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(reset)}
        body = {"message": "API rate limit exceeded for installation ID 1."}
        return self.fail_next(method, path_regex, 403, headers, body)

    def limit_rate(self, remaining: int, limit: int = 1000, reset_in: int = 3600) -> None:
        """Count requests against GitHub's primary rate limit: each answer says how many are
        left (`X-RateLimit-Remaining`); at 0 every request gets the 403 GitHub sends until the
        reset, which here comes when `limit_rate` is called again."""
        with self.lock:
            self.rate_remaining = remaining
            self.rate_limit = limit
            self.rate_reset = int(datetime.now().timestamp()) + reset_in

    def before(self, method: str, path_regex: str, action: Callable[[], None]) -> None:
        """Run `action` (once) just before the next request matching `method` and the regex is
        served: a human acting while a run is under way (a vote, an edit)."""
        with self.lock:
            self.hooks.append((method.upper(), re.compile(path_regex), action))

    @property
    def writes(self) -> list[tuple[str, str, Any]]:
        """(method, path, body) of every request other than GET (and GraphQL reads), in order."""
        return [
            (r.method, r.path, r.body)
            for r in self.requests
            if r.method != "GET" and r.path != "/graphql"
        ]

    @property
    def claims(self) -> list[tuple[str, str, Any]]:
        """The writes that claim or release a comment (reactions), apart from the issue's."""
        return [w for w in self.writes if "/reactions" in w[1]]

    @property
    def issue_writes(self) -> list[tuple[str, str, Any]]:
        """Every write but the claims: what changes the issue, its labels and comments."""
        return [w for w in self.writes if "/reactions" not in w[1]]

    def paths(self, method: str = "GET") -> list[str]:
        return [r.path for r in self.requests if r.method == method]

    def clear_requests(self) -> None:
        with self.lock:
            self.requests.clear()

    # ---- dispatch --------------------------------------------------------------------------

    def handle(
        self, method: str, raw_path: str, headers: dict[str, str], body: Any
    ) -> tuple[int, dict[str, str], Any] | None:
        """Answer one request: (status, headers, JSON body), or None to drop the connection."""
        delay, result = self.answer(method, raw_path, headers, body)
        return result

    def answer(
        self, method: str, raw_path: str, headers: dict[str, str], body: Any
    ) -> tuple[float, tuple[int, dict[str, str], Any] | None]:
        """`handle` with the delay the answer must wait (injected timeouts)."""
        split = urlsplit(raw_path)
        path = unquote(split.path)
        query = dict(parse_qsl(split.query, keep_blank_values=True))
        entry = LoggedRequest(method, path, query, body)
        with self.lock:
            for hook in list(self.hooks):
                if hook[0] in ("*", method) and hook[1].search(path):
                    self.hooks.remove(hook)
                    hook[2]()
            self.requests.append(entry)
            limited = self._rate_limited()
            if limited is not None:
                entry.status = limited[0]
                return 0.0, limited
            failure = next((f for f in self.failures if f.matches(method, path)), None)
            if failure is not None:
                failure.times -= 1
                if failure.times <= 0:
                    self.failures.remove(failure)
            result = None
            if failure is None or failure.apply:
                result = self._route(method, split.path, query, headers, body)
            delay = failure.delay if failure is not None else 0.0
            if failure is not None:
                if failure.disconnect:
                    entry.status = -1
                    return delay, None
                if failure.status:
                    msg = (
                        failure.body
                        if failure.body is not None
                        else {"message": DEFAULT_MESSAGES.get(failure.status, "Server Error")}
                    )
                    result = (failure.status, dict(failure.headers), msg)
            assert result is not None
            entry.status = result[0]
            if self.rate_remaining is not None:
                result = (result[0], {**result[1], **self._rate_headers()}, result[2])
            return delay, result

    def _rate_headers(self) -> dict[str, str]:
        return {
            "X-RateLimit-Limit": str(self.rate_limit),
            "X-RateLimit-Remaining": str(self.rate_remaining),
            "X-RateLimit-Reset": str(self.rate_reset),
        }

    def _rate_limited(self) -> tuple[int, dict[str, str], Any] | None:
        """The 403 of an exhausted rate limit, or None (and one request counted)."""
        if self.rate_remaining is None:
            return None
        if self.rate_remaining <= 0:
            body = {"message": "API rate limit exceeded for installation ID 1."}
            return 403, self._rate_headers(), body
        self.rate_remaining -= 1
        return None

    def _route(
        self, method: str, path: str, query: dict[str, str], headers: dict[str, str], body: Any
    ) -> tuple[int, dict[str, str], Any]:
        if self.token is not None:
            auth = headers.get("authorization", "")
            if auth not in (f"token {self.token}", f"Bearer {self.token}"):
                return 401, {}, {"message": "Bad credentials"}
        repo = re.escape(self.full_name)
        try:
            for verb, pattern, name in self.ROUTES:
                m = re.fullmatch(pattern.replace("{repo}", repo), path, flags=re.IGNORECASE)
                if m and verb == method:
                    args = [unquote(g) for g in m.groups()]
                    answer = getattr(self, name)(*args, query=query, body=body)
                    if isinstance(answer, tuple):
                        return answer
                    return 200, {}, answer
            raise ApiError(404)
        except ApiError as exc:
            return exc.status, {}, exc.body


class _Handler(BaseHTTPRequestHandler):
    """Turns HTTP into `FakeGitHub.handle` calls (HTTP/1.1, keep-alive, JSON)."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # else each answer waits ~40 ms for a delayed ACK
    wbufsize = 1 << 16  # headers and body leave in one write (flushed per request)
    fake: FakeGitHub

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
        pass

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        headers = {k.lower(): v for k, v in self.headers.items()}
        delay, result = self.fake.answer(self.command, self.path, headers, body)
        if delay:
            time.sleep(delay)
        if result is None:
            self.close_connection = True
            return
        status, extra, data = result
        payload = b"" if status == 204 else json.dumps(data).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("X-RateLimit-Limit", extra.pop("X-RateLimit-Limit", "5000"))
        self.send_header("X-RateLimit-Remaining", extra.pop("X-RateLimit-Remaining", "4999"))
        self.send_header("X-RateLimit-Reset", extra.pop("X-RateLimit-Reset", "1893456000"))
        for key, value in extra.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = do_PATCH = do_DELETE = do_PUT = _serve
