"""The `copilot` engine: GitHub Copilot CLI (`copilot -p PROMPT -s --output-format json`).

Read-only: `--available-tools` offers only view, grep, glob and the shell (named `bash` on Linux
and macOS), the shell is allowed only for `issue-assistant` (the CLI's shell rules match a
command's name, so `shell(issue-assistant search)` would match no search with words; inside an
engine run `issue-assistant` refuses every subcommand but `search`), `write` is denied, the
built-in GitHub MCP server (the live tracker) is disabled, `--no-ask-user` never waits for a
person and `--no-auto-update` keeps the installed version. Anything not allowed is denied, since
no one can answer a prompt. The CLI reads `COPILOT_ALLOW_ALL` and tokens (`COPILOT_GITHUB_TOKEN`,
`GH_TOKEN`, `GITHUB_TOKEN`) from the environment: only `COPILOT_GITHUB_TOKEN` is passed on.
Output: JSON Lines events; the answer is the last `assistant.message`, errors are
`session.error` events, and the final `result` event reports premium requests, not dollars.
Checked against Copilot CLI 1.0.102 (docs/engines.md).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from issue_assistant.decision import Usage
from issue_assistant.engine_registry import register
from issue_assistant.engines.command import CommandEngine, Finished, Reply, failure, text_failure
from issue_assistant.engines.failures import from_status, from_text

READ_TOOLS = ("view", "grep", "glob")
SHELL = "bash"  # the shell tool's name off Windows (`powershell` there)
SEARCH = "shell(issue-assistant)"
ERRORS = ("session.error", "error")


def events(text: str) -> list[dict[str, Any]]:
    """The JSON objects of a JSON Lines output (other lines ignored)."""
    out = []
    for line in text.splitlines():
        try:
            item = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(item, dict):
            out.append(item)
    return out


@register
class CopilotEngine(CommandEngine):
    """GitHub Copilot CLI: your `copilot` login, or COPILOT_GITHUB_TOKEN (a fine-grained PAT)."""

    name = "copilot"
    command = "copilot"
    package = "@github/copilot"
    key_env = ("COPILOT_GITHUB_TOKEN",)
    login_files = (".copilot/config.json",)
    login_hint = "or run `copilot` once and `/login`"

    def argv(self, prompt: str, work: Path, *, resume: str | None = None) -> list[str]:
        agent = self.strategy == "agent"
        tools = ",".join(READ_TOOLS + ((SHELL,) if agent else ()))
        argv = [self.binary, "-p", prompt, "-s", "--no-ask-user", "--no-auto-update"]
        argv += ["--output-format", "json"]
        if self.config.engine.model:
            argv += ["--model", self.config.engine.model]
        argv += ["--available-tools", tools, "--deny-tool", "write", "--disable-builtin-mcps"]
        if agent:
            argv += ["--allow-tool", SEARCH]
        return argv

    def parse(self, done: Finished) -> Reply:
        items = events(done.stdout)
        messages = [
            e.get("data", {}).get("content")
            for e in items
            if e.get("type") == "assistant.message" and isinstance(e.get("data"), dict)
        ]
        result = next((e for e in reversed(items) if e.get("type") == "result"), None)
        if done.code or result is None and not messages:
            if done.code == 0:
                raise failure("copilot printed no JSON events", "schema")
            error = next((e for e in reversed(items) if e.get("type") in ERRORS), None)
            if error:
                data = error.get("data") if isinstance(error.get("data"), dict) else {}
                text = str(data.get("message") or error)
                status = data.get("statusCode")
                kind = from_status(status) if isinstance(status, int) else from_text(text)
                raise failure(f"copilot: {text[:300]}", kind)
            raise text_failure("copilot", done)
        text = next((m for m in reversed(messages) if isinstance(m, str) and m.strip()), "")
        tools = sum(1 for e in items if e.get("type") == "tool.execution_complete")
        # Copilot reports premium requests, not tokens or dollars: the cost is unknown.
        usage = Usage(turns=len(messages), tool_calls=tools, cost_known=False)
        return Reply(text, usage)
