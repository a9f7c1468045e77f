"""Errors a user can act on, kept apart from internal failures."""

from __future__ import annotations


class UserError(Exception):
    """A problem with the user's input (a file, a flag, an issue number): one line, exit 2."""

    exit_code = 2

    def __init__(self, message: str, *, where: str | None = None) -> None:
        self.where = where
        super().__init__(f"{where}: {message}" if where else message)


class EngineError(Exception):
    """An engine failed to produce a decision; nothing may be written from it."""


class GitHubError(Exception):
    """A GitHub API call failed (403, 404, 422, 5xx after retries, or no connection)."""

    exit_code = 1

    def __init__(
        self, method: str, path: str, status: int | None, message: str, *, data: object = None
    ) -> None:
        self.method = method
        self.path = path
        self.status = status
        self.message = message
        self.data = data
        code = f"{status} " if status is not None else ""
        super().__init__(f"GitHub {method} {path} failed: {code}{message}".rstrip())
