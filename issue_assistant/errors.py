"""Errors a user can act on, kept apart from internal failures."""

from __future__ import annotations


class UserError(Exception):
    """A problem with the user's input (a file, a flag, an issue number): one line, exit status 2."""

    exit_code = 2

    def __init__(self, message: str, *, where: str | None = None) -> None:
        self.where = where
        super().__init__(f"{where}: {message}" if where else message)


class EngineError(Exception):
    """An engine failed to produce a decision; nothing may be written from it."""
