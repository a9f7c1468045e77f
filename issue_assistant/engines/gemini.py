"""The `gemini` engine: Gemini CLI headless (`gemini -p PROMPT -o json`), read-only.

The approval modes are not read-only in headless runs, so the tools are restricted in the
settings written to the temporary HOME: `tools.core` registers only the read tools and allows
the one shell command `issue-assistant search` (every other tool call is denied by policy in a
headless run), write and web tools are also excluded, no MCP server is configured, and the
working directory is trusted explicitly (an untrusted one exits 55).
Output: `response`, `stats`, `error` on stdout; a fatal error's JSON goes to stderr instead, and
the exit code says what it was (53 the turn limit, 41 authentication, 52 configuration).
Checked against Gemini CLI 0.61.0 (docs/engines.md).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import Field

from issue_assistant.decision import Usage
from issue_assistant.engine_registry import register
from issue_assistant.engines import prices
from issue_assistant.engines.command import (
    CommandEngine,
    CommandOptions,
    Finished,
    Reply,
    count,
    failure,
    json_object,
    obj,
    text_failure,
)
from issue_assistant.engines.failures import Kind, from_status, from_text

# Tool names at 0.61.0: `grep_search` was `search_file_content`, which `tools.core` no longer
# matches; `read_many_files` is not a model tool any more.
READ_TOOLS = ("read_file", "glob", "grep_search", "list_directory")
SEARCH = "run_shell_command(issue-assistant search)"
EXCLUDED = ("write_file", "replace", "web_fetch", "google_web_search", "invoke_agent")
EXIT: dict[int, Kind] = {41: "setup", 52: "setup", 55: "setup", 53: "limit", 42: "unknown"}


class GeminiOptions(CommandOptions):
    model: str = Field(default="", description="default model when [engine] model is empty")


def error_object(stderr: str) -> dict[str, Any] | None:
    """The JSON error a fatal failure prints to stderr (after warnings, maybe after `[ERROR] `)."""
    decoder = json.JSONDecoder()
    stderr = stderr[-65536:]  # the error comes last; a long log before it is not searched
    start = stderr.find("{")
    while start != -1:
        try:
            data, _ = decoder.raw_decode(stderr, start)
        except (ValueError, RecursionError):
            data = None
        if isinstance(data, dict) and "error" in data:
            return data
        start = stderr.find("{", start + 1)
    return None


@register
class GeminiEngine(CommandEngine):
    """Gemini CLI: your Google login, or GEMINI_API_KEY."""

    name = "gemini"
    Options = GeminiOptions
    options: GeminiOptions
    command = "gemini"
    package = "@google/gemini-cli"
    key_env = ("GEMINI_API_KEY",)
    login_files = (".gemini/oauth_creds.json", ".gemini/google_accounts.json")
    login_hint = "or run `gemini` once and log in with Google"

    @property
    def model(self) -> str:
        return self.config.engine.model or self.options.model

    def settings(self) -> dict[str, Any]:
        core = list(READ_TOOLS) + ([SEARCH] if self.strategy == "agent" else [])
        auth = "gemini-api-key" if self._has_key() else "oauth-personal"
        return {
            # `core` both registers the tools and allows exactly them (the shell only for the
            # search); `tools.allowed` would add nothing and is deprecated.
            "tools": {"core": core, "exclude": list(EXCLUDED)},
            "mcpServers": {},
            "model": {"maxSessionTurns": self.config.engine.max_turns},
            "security": {"folderTrust": {"enabled": True}, "auth": {"selectedType": auth}},
            "telemetry": {"enabled": False},
            "privacy": {"usageStatisticsEnabled": False},
        }

    def setup_home(self, home: Path, work: Path) -> None:
        super().setup_home(home, work)
        d = home / ".gemini"
        d.mkdir(parents=True, exist_ok=True)
        (d / "settings.json").write_text(json.dumps(self.settings(), indent=2))
        (d / "trustedFolders.json").write_text(json.dumps({str(work): "TRUST_FOLDER"}))

    def argv(self, prompt: str, work: Path, *, resume: str | None = None) -> list[str]:
        argv = [self.binary, "-p", prompt, "-o", "json"]
        if self.model:
            argv += ["-m", self.model]
        return argv

    def parse(self, done: Finished) -> Reply:
        data = json_object(done.stdout.strip()) or error_object(done.stderr)
        if done.code in EXIT:
            error = (data or {}).get("error")
            detail = error.get("message") if isinstance(error, dict) else error
            raise failure(f"gemini: {str(detail or f'exit {done.code}')[:300]}", EXIT[done.code])
        if data is None:
            if done.code:
                raise text_failure("gemini", done)
            raise failure("gemini printed no JSON", "schema")
        error = data.get("error")
        if error:
            code = error.get("code") if isinstance(error, dict) else None
            message = str(error.get("message") if isinstance(error, dict) else error)
            kind = from_status(code) if isinstance(code, int) else from_text(message)
            raise failure(f"gemini: {message[:300]}", kind)
        return Reply(str(data.get("response") or ""), self._usage(obj(data, "stats")))

    def _usage(self, stats: dict[str, Any]) -> Usage:
        usage = Usage(tool_calls=count(obj(stats, "tools").get("totalCalls")))
        known, dollars = True, 0.0
        for model, info in obj(stats, "models").items():
            info = info if isinstance(info, dict) else {}
            t = obj(info, "tokens")
            cached = count(t.get("cached"))
            t_in = max(count(t.get("prompt")) - cached, 0)
            t_out = count(t.get("candidates")) + count(t.get("thoughts"))
            price = prices.cost(str(model), "google", t_in, t_out, cache_read=cached)
            known &= price is not None
            dollars += price or 0.0
            turns = count(obj(info, "api").get("totalRequests"))
            usage = usage.model_copy(
                update={
                    "tokens_in": usage.tokens_in + t_in,
                    "tokens_out": usage.tokens_out + t_out,
                    "cache_read_tokens": usage.cache_read_tokens + cached,
                    "turns": usage.turns + turns,
                }
            )
        return usage.model_copy(update={"cost_usd": dollars, "cost_known": known})
