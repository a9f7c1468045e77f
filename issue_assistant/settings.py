"""Every environment variable the assistant reads, read once into one typed object.

The CLI (`cli.main`) and the Action (`action.main`) each build a `Settings` from the environment
at start and activate it for the run (`using`); code further down calls `current()`. The same
variables mean the same thing in both, with one precedence (documented in
docs/configuration.md): a flag (CLI) or an input (Action) first, then the variables in the order
of their `AliasChoices`, then the configuration files, then the default.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, MutableMapping
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError, field_validator

from issue_assistant.errors import NO_REPOSITORY, NO_TOKEN, UserError

DEFAULT_API_URL = "https://api.github.com"
# numpy's BLAS pool, one thread: the label models multiply small matrices beside a thread of their
# own, and a pool sized for every core only spins waiting for work (a third more CPU for the same
# evaluate, docs/benchmarks.md). The image sets the same (Dockerfile).
NATIVE_THREADS = {"OPENBLAS_NUM_THREADS": "1"}


def pin_native_threads(env: MutableMapping[str, str] | None = None) -> None:
    """Give native libraries their thread counts (`NATIVE_THREADS`) where the user set none; only
    effective before numpy is first imported, as the CLI calls it."""
    target = os.environ if env is None else env
    for name, value in NATIVE_THREADS.items():
        target.setdefault(name, value)


def _env(*names: str) -> Any:
    """A field read from the first of `names` that is set and not empty."""
    return Field(default=None, validation_alias=AliasChoices(*names))


class Settings(BaseModel):
    """The environment, typed. Names are case-insensitive; empty variables count as unset (the
    runner passes unset inputs as empty strings), so the next name of a field's `AliasChoices`
    is tried.

    A plain pydantic model validated from the environment mapping: pydantic picks the first
    alias present, which is all pydantic-settings did here (one source, no files), and importing
    pydantic-settings slowed every command's start (docs/benchmarks.md, startup).
    """

    model_config = ConfigDict(extra="ignore", frozen=True)

    # Action inputs (the runner passes `with:` values as INPUT_<NAME>, hyphens kept); the CLI
    # reads the same variables, after its own flags.
    command: str | None = _env("INPUT_COMMAND")
    engine: str | None = _env("INPUT_ENGINE", "ISSUE_ASSISTANT_ENGINE")
    model: str | None = _env("INPUT_MODEL", "ISSUE_ASSISTANT_MODEL")
    labels: str | None = _env("INPUT_LABELS", "ISSUE_ASSISTANT_LABELS")
    config: str | None = _env("INPUT_CONFIG", "ISSUE_ASSISTANT_CONFIG")
    writes: str | None = _env("INPUT_WRITES", "ISSUE_ASSISTANT_WRITES")
    # `backlog`'s inputs (on workflow_dispatch or a schedule).
    limit: str | None = _env("INPUT_LIMIT")
    order: str | None = _env("INPUT_ORDER")
    duplicates: str | None = _env("INPUT_DUPLICATES")
    post: str | None = _env("INPUT_POST")
    # Secrets.
    github_token: str | None = _env(
        "INPUT_GITHUB-TOKEN", "INPUT_GITHUB_TOKEN", "GITHUB_TOKEN", "GH_TOKEN"
    )
    # Which of the names above gave the token (set by `from_env`), for a 401's hint.
    github_token_from: str | None = None
    anthropic_api_key: str | None = _env(
        "INPUT_ANTHROPIC-API-KEY", "INPUT_ANTHROPIC_API_KEY", "ANTHROPIC_API_KEY"
    )
    anthropic_base_url: str | None = _env("ANTHROPIC_BASE_URL")
    # The command-line engines' own keys (engines/claude.py, gemini.py, copilot.py).
    claude_code_oauth_token: str | None = _env("CLAUDE_CODE_OAUTH_TOKEN")
    gemini_api_key: str | None = _env("GEMINI_API_KEY")
    copilot_github_token: str | None = _env("COPILOT_GITHUB_TOKEN")
    # GitHub: the repository and the API, as set by the runner (or by `gh`'s conventions).
    repository: str | None = _env("GH_REPO", "GITHUB_REPOSITORY")
    api_url: str = Field(
        default=DEFAULT_API_URL, validation_alias=AliasChoices("GITHUB_API_URL", "GH_API_URL")
    )
    actions: bool = Field(default=False, validation_alias=AliasChoices("GITHUB_ACTIONS"))
    event_name: str | None = _env("GITHUB_EVENT_NAME")
    event_path: str | None = _env("GITHUB_EVENT_PATH")
    workspace: str | None = _env("GITHUB_WORKSPACE")
    sha: str | None = _env("GITHUB_SHA")
    output: str | None = _env("GITHUB_OUTPUT")
    step_summary: str | None = _env("GITHUB_STEP_SUMMARY")
    runner_temp: str | None = _env("RUNNER_TEMP")
    # The assistant's own.
    cache_dir: str | None = _env("ISSUE_ASSISTANT_CACHE")
    # How long a run waits for another run that holds the same cache (`cachelock`), seconds.
    lock_wait: float = Field(
        default=120.0, ge=0, le=3600, validation_alias=AliasChoices("ISSUE_ASSISTANT_LOCK_WAIT")
    )
    max_retries: int = Field(
        default=3, ge=0, le=20, validation_alias=AliasChoices("ISSUE_ASSISTANT_MAX_RETRIES")
    )
    # Set by a command-line engine for the `search` its CLI runs (engines/command.py).
    search_socket: str | None = _env("ISSUE_ASSISTANT_SEARCH_SOCKET")
    ci: bool = Field(default=False, validation_alias=AliasChoices("CI"))
    # The process's own, passed on to a command-line engine's process (nothing else is).
    home: str | None = _env("HOME")
    path: str | None = _env("PATH")
    lang: str | None = _env("LANG")
    lc_all: str | None = _env("LC_ALL")
    lc_ctype: str | None = _env("LC_CTYPE")
    tz: str | None = _env("TZ")

    @field_validator("actions", "ci", mode="before")
    @classmethod
    def _flag(cls, value: object) -> object:
        if isinstance(value, str):
            return value.strip().lower() in ("1", "true", "yes")
        return value

    @field_validator("*", mode="before")
    @classmethod
    def _strip(cls, value: object) -> object:
        return value.strip() if isinstance(value, str) else value

    @field_validator("api_url")
    @classmethod
    def _api_url(cls, value: str) -> str:
        return api_url(value)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """Read `env` (default: the process environment) once; a bad value is a UserError."""
        mapping = os.environ if env is None else env
        values = {k.upper(): v for k, v in mapping.items() if v != ""}
        try:
            settings = cls.model_validate(values)
        except ValidationError as exc:
            err = exc.errors()[0]
            field = str(err["loc"][0]) if err["loc"] else "?"
            alias = cls.model_fields[field].validation_alias if field in cls.model_fields else None
            names = [str(n) for n in getattr(alias, "choices", ())]
            name = next((n for n in names if n in values), field)
            msg = str(err["msg"]).removeprefix("Value error, ")
            raise UserError(msg, where=f"environment variable {name}") from None
        names = cls.model_fields["github_token"].validation_alias.choices  # type: ignore[union-attr]
        source = next((str(n) for n in names if str(n) in values), None)
        return settings.model_copy(update={"github_token_from": source})

    def variables(self, *names: str) -> dict[str, str]:
        """The named variables that are set, by name, for a child process's environment (a
        command-line engine's); each name must be one of `PASSED_ON`."""
        out = {}
        for name in names:
            value = getattr(self, PASSED_ON[name])
            if value:
                out[name] = value
        return out

    def require_token(self) -> str:
        if not self.github_token:
            raise UserError(NO_TOKEN)
        return self.github_token

    def cache_root(self, configured: str = "", flag: str | None = None) -> Path:
        """Where the index and the other caches go: `--cache-dir`, else $ISSUE_ASSISTANT_CACHE,
        else `[index] cache_dir`, else $RUNNER_TEMP/issue-assistant in Actions (what the
        workflow keeps with actions/cache), else the platform's user cache folder
        (`~/.cache/issue-assistant` on Linux); never the checkout unless asked."""
        chosen = flag or self.cache_dir or configured
        if chosen:
            return Path(chosen).expanduser()
        if self.actions and self.runner_temp:
            return Path(self.runner_temp) / "issue-assistant"
        import platformdirs

        return Path(platformdirs.user_cache_dir("issue-assistant", appauthor=False))

    def require_repository(self, explicit: str | None = None) -> str:
        """OWNER/REPO from the argument, then GH_REPO, then GITHUB_REPOSITORY."""
        value = explicit or self.repository or ""
        if not value:
            raise UserError(NO_REPOSITORY)
        owner, _, name = value.partition("/")
        if not owner or not name or "/" in name or not all(_repo_part(p) for p in (owner, name)):
            raise UserError(f"expected OWNER/REPO (or GH_REPO), got {value!r}")
        return value


def token_source() -> str:
    """Where the running command's GitHub token came from, in words (for a 401's hint)."""
    name = current().github_token_from or "GITHUB_TOKEN"
    return "the github-token input" if name.startswith("INPUT_") else name


def api_url(value: str) -> str:
    """The REST API root as PyGithub needs it: `http(s)://host[:port][/path]`, no trailing
    slash; a ValueError saying what is wrong otherwise (PyGithub would fail with a traceback)."""
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(
            f"the GitHub API URL must start with https:// (or http://) and name a host, like "
            f"{DEFAULT_API_URL} or https://github.example.com/api/v3, not {value!r}"
        )
    try:
        parts.port  # noqa: B018 - raises on a port that is not a number
    except ValueError:
        raise ValueError(
            f"the GitHub API URL has a bad port: {value!r} (like https://ghe.example.com:8443)"
        ) from None
    return value.rstrip("/")


#: the variables `Settings.variables` can pass on to a child process, and the field of each
PASSED_ON = {
    "PATH": "path",
    "LANG": "lang",
    "LC_ALL": "lc_all",
    "LC_CTYPE": "lc_ctype",
    "TZ": "tz",
    "HOME": "home",
    "ANTHROPIC_API_KEY": "anthropic_api_key",
    "CLAUDE_CODE_OAUTH_TOKEN": "claude_code_oauth_token",
    "GEMINI_API_KEY": "gemini_api_key",
    "COPILOT_GITHUB_TOKEN": "copilot_github_token",
}


def _repo_part(text: str) -> bool:
    return all(c.isalnum() or c in "_.-" for c in text)


_CURRENT: ContextVar[Settings | None] = ContextVar("issue_assistant_settings", default=None)


def current() -> Settings:
    """The settings of the running command; read afresh when no entry point set them (a test or
    a library call)."""
    return _CURRENT.get() or Settings.from_env()


@contextmanager
def using(settings: Settings) -> Iterator[Settings]:
    """Make `settings` the ones `current()` returns for the duration of a run."""
    token = _CURRENT.set(settings)
    try:
        yield settings
    finally:
        _CURRENT.reset(token)


def get_input(env: Mapping[str, str], name: str) -> str:
    """An action input as the runner passes it (`INPUT_NAME`, hyphens kept or turned into `_`)."""
    upper = name.upper()
    for key in (f"INPUT_{upper}", f"INPUT_{upper.replace('-', '_')}"):
        if env.get(key, "").strip():
            return env[key].strip()
    return ""
