"""Errors a user can act on, kept apart from internal failures, and the one way each is shown.

Every error the assistant raises on purpose is an `AssistantError` with an exit status: a user
error (a file, a flag, an issue number) is 2, a GitHub or engine failure is 1. The CLI prints it
with `print_cli`, the Action with `print_action` (one `::error::` annotation); neither prints a
traceback. This module imports nothing heavy: the CLI imports it before choosing a command.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TextIO


class AssistantError(Exception):
    """An error the assistant reports to the user in one line, with an exit status."""

    exit_code = 1
    #: what the line says before the message ("error", "engine failed", ...)
    label = "error"
    #: appended to the message: what the failure did not do
    consequence = ""

    def line(self) -> str:
        """The one line shown to the user (without the program name)."""
        text = f"{self.label}: {self}"
        return f"{text}; {self.consequence}" if self.consequence else text


class UserError(AssistantError):
    """A problem with the user's input (a file, a flag, an issue number): one line, exit 2."""

    exit_code = 2

    def __init__(self, message: str, *, where: str | None = None) -> None:
        self.where = where
        super().__init__(f"{where}: {message}" if where else message)


class IssueGone(UserError):
    """The issue is no longer one of this repository (deleted, or transferred elsewhere)."""

    reason = "no longer an issue of this repository (deleted or transferred)"


class EngineError(AssistantError):
    """An engine failed to produce a decision; nothing may be written from it."""

    label = "engine failed"
    consequence = "nothing was written"


class GitHubError(AssistantError):
    """A GitHub API call failed (403, 404, 422, 5xx after retries, or no connection).

    `hint` says what to do (which token, which scopes, which setting); `consequence` is set only
    where a write could have happened ("nothing was written", "nothing more was written"), never
    on a read-only command."""

    def __init__(
        self,
        method: str,
        path: str,
        status: int | None,
        message: str,
        *,
        data: object = None,
        hint: str = "",
        consequence: str = "",
    ) -> None:
        self.method = method
        self.path = path
        self.status = status
        self.message = message
        self.data = data
        self.hint = hint
        self.consequence = consequence
        code = f"{status} " if status is not None else ""
        super().__init__(f"GitHub {method} {path} failed: {code}{message}".rstrip())

    def line(self) -> str:
        text = super().line()
        return f"{text}. {self.hint}" if self.hint else text


#: the one wording for a repository or issue GitHub answers 404 about (it does so for a private
#: repository the token cannot see, too)
class ToolFailure(Exception):
    """A read-only tool's answer is an error the model should read (a bad path, no such issue,
    ...): the tool loop shows it to the engine; it never reaches the user."""


NOT_FOUND_HINT = "no access, or private? Check the name, and that the token can read it"
#: the one wording for a command given no repository (live only, or also a snapshot)
NO_REPOSITORY = "no repository: give -R OWNER/REPO (or set GH_REPO)"
NO_SOURCE = f"{NO_REPOSITORY}, or --snapshot FILE"
#: the one wording for a missing GitHub token, on every command that reads GitHub
NO_TOKEN = (
    "no GitHub token: set GITHUB_TOKEN or GH_TOKEN (in a workflow, the github-token input) "
    "to a token that can read the repository"
)


def no_such_repository(full_name: str) -> str:
    return f"{full_name}: no such repository ({NOT_FOUND_HINT})"


def no_such_issue(full_name: str, number: int) -> str:
    return f"{full_name}#{number}: no such issue ({NOT_FOUND_HINT})"


class RepositoryNotFound(GitHubError):
    """GitHub answered 404 for the repository itself: a user error (a wrong name, or a token
    that cannot see it), said in the same words by every command."""

    exit_code = 2

    def __init__(self, full_name: str, method: str, path: str, message: str) -> None:
        super().__init__(method, path, 404, message)
        self.full_name = full_name

    def line(self) -> str:
        return f"{self.label}: {no_such_repository(self.full_name)}"


def print_cli(exc: AssistantError, stream: TextIO | None = None) -> int:
    """The CLI's one place to show an error: `issue-assistant: LINE` on stderr; the exit status."""
    print(f"issue-assistant: {exc.line()}", file=stream or sys.stderr)
    return exc.exit_code


def annotation(exc: AssistantError, clean: Callable[[str], str] | None = None) -> str:
    """The error as one GitHub Actions `::error::` workflow command (data escaped as the runner
    expects: `%`, CR and LF); `clean` (e.g. the log sanitizer) is applied to the line first."""
    line = exc.line()
    # `::error::` already says it is an error: not `::error::error: ...`.
    line = line.removeprefix(f"{AssistantError.label}: ")
    text = clean(line) if clean else line
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return f"::{'notice' if exc.exit_code == 0 else 'error'}::{text}"


def print_action(
    exc: AssistantError,
    stream: TextIO | None = None,
    *,
    clean: Callable[[str], str] | None = None,
) -> int:
    """The Action's one place to show an error: one `::error::` line; the exit status."""
    print(annotation(exc, clean), file=stream or sys.stderr)
    return exc.exit_code


class CacheBusy(AssistantError):
    """Another run holds the cache (its index or backlog state) past the wait: nothing was done.
    Exit 0: the other run does the work (the Action's second run has nothing to do)."""

    exit_code = 0
    label = "skipped"
    consequence = "nothing was done"
