"""Why an engine call failed, and what to do about it (docs/engines.md, "Failures").

| class | recovery |
| --- | --- |
| transient | backoff with jitter within the issue's time budget |
| schema | one re-ask quoting the validation errors, then give up |
| limit | a forced final answer from what was gathered |
| setup | a UserError, no retry |
| unknown | no retry; the fallback engine answers |
| crash | no retry; the fallback engine answers (an exception in the engine's own code) |

Classes come from structured signals (HTTP status, exit codes, SDK error types); text is read
only as a last resort, and what matches nothing stays `unknown`.
"""

from __future__ import annotations

import random
import re
from typing import TYPE_CHECKING, Literal

from issue_assistant.errors import EngineError

if TYPE_CHECKING:
    from issue_assistant.decision import Usage

Kind = Literal["transient", "schema", "limit", "setup", "unknown", "crash"]
KINDS: tuple[Kind, ...] = ("transient", "schema", "limit", "setup", "unknown", "crash")

TRANSIENT_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})
SETUP_STATUS = frozenset({401, 403})
_TRANSIENT_TEXT = re.compile(
    r"\b(overloaded|rate.?limit|too many requests|connection reset|temporarily unavailable|"
    r"try again later|timed? ?out)\b",
    re.IGNORECASE,
)
_SETUP_TEXT = re.compile(
    r"\b(not logged in|please log ?in|invalid api key|authentication|unauthori[sz]ed|"
    r"login required)\b",
    re.IGNORECASE,
)


class EngineFailure(EngineError):
    """An EngineError with its class (`kind`), what the engine spent before it failed (`usage`,
    None when unknown) and, for a command-line agent, the session a forced final answer resumes
    (`session`); the message is for people."""

    def __init__(
        self,
        message: str,
        kind: Kind = "unknown",
        *,
        usage: Usage | None = None,
        session: str | None = None,
    ) -> None:
        super().__init__(message)
        self.kind: Kind = kind
        self.usage = usage
        self.session = session


def kind_of(exc: BaseException) -> Kind:
    """The class of a failure: its own, or `unknown` for any other error."""
    return exc.kind if isinstance(exc, EngineFailure) else "unknown"


def spent(exc: BaseException) -> Usage | None:
    """What an engine spent before it failed with `exc` (None when unknown)."""
    return exc.usage if isinstance(exc, EngineFailure) else None


def crashed(exc: Exception, engine: str) -> EngineFailure:
    """Any other exception out of an engine's run or parse (a RecursionError on deeply nested
    JSON, a TypeError on an odd envelope, a bug) as a `crash` failure: the fallback answers."""
    detail = " ".join(str(exc).split())[:200]
    message = f"{engine} failed: {type(exc).__name__}" + (f": {detail}" if detail else "")
    failure = EngineFailure(message, "crash")
    failure.__cause__ = exc
    return failure


def from_status(status: int | None) -> Kind:
    """The class of an HTTP status (None: no response at all, a transient network failure)."""
    if status is None:
        return "transient"
    if status in TRANSIENT_STATUS:
        return "transient"
    if status in SETUP_STATUS:
        return "setup"
    return "unknown"


def from_text(text: str) -> Kind:
    """Last resort: a CLI's error message. Unknown unless a well-known phrase is in it."""
    if _SETUP_TEXT.search(text):
        return "setup"
    if _TRANSIENT_TEXT.search(text):
        return "transient"
    return "unknown"


def backoff(attempt: int, base: float = 1.0, cap: float = 20.0) -> float:
    """Full-jitter exponential backoff, in seconds, for retry number `attempt` (1, 2, ...)."""
    return random.uniform(0, min(cap, base * 2 ** (attempt - 1)))


def retry_pause(
    exc: EngineFailure, attempt: int, attempts: int, remaining: float, base: float = 1.0
) -> float | None:
    """Seconds to wait before trying again after `exc` failed try number `attempt` of `attempts`,
    with `remaining` seconds of the time budget left; None: do not try again."""
    if exc.kind != "transient" or attempt >= attempts:
        return None
    pause = backoff(attempt, base)
    return None if pause + 1.0 >= remaining else pause
