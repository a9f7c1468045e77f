"""The `claude` engine: Claude Code headless (`claude -p`), read-only, prompt on stdin.

Tools: Read, Grep, Glob and the one shell command `issue-assistant search` (agent strategy);
`--permission-mode dontAsk` refuses anything not pre-allowed, `--strict-mcp-config` loads no MCP
server. The prompt goes on stdin, since `--allowedTools A B "prompt"` takes the prompt for a tool.
Output: one JSON object (`result`, `subtype`, `is_error`, `total_cost_usd`, `usage`, `num_turns`,
`session_id`, `api_error_status`); `subtype` `error_max_turns` (or the budget's) is a limit,
answered by resuming the session for a final answer. `--max-budget-usd` is `[engine] budget_usd`.
`total_cost_usd` is the session's running total (a resumed session's includes the earlier runs),
while `usage` counts this run only. Checked against Claude Code 2.1.328 (docs/engines.md).
"""

from __future__ import annotations

from pathlib import Path

from issue_assistant.decision import Usage
from issue_assistant.engine_registry import register
from issue_assistant.engines.command import (
    CommandEngine,
    Finished,
    Reply,
    amount,
    count,
    failure,
    json_object,
    obj,
    text_failure,
)
from issue_assistant.engines.failures import from_status, from_text

READ_TOOLS = ("Read", "Grep", "Glob")
SEARCH = "Bash(issue-assistant search:*)"
# `Agent` is the subagent tool's name at 2.1.328; `Task` is kept as its alias.
DENIED = ("Write", "Edit", "MultiEdit", "NotebookEdit", "WebFetch", "WebSearch", "Task", "Agent")


@register
class ClaudeEngine(CommandEngine):
    """Claude Code on your machine or in the CLI image: your login, or ANTHROPIC_API_KEY."""

    name = "claude"
    command = "claude"
    package = "@anthropic-ai/claude-code"
    key_env = ("ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN")
    login_files = (".claude/.credentials.json",)
    login_hint = "or run `claude` once and log in (`claude setup-token` for a workflow)"
    session_cost_is_total = True

    def argv(self, prompt: str, work: Path, *, resume: str | None = None) -> list[str]:
        agent = self.strategy == "agent"
        tools = ",".join(READ_TOOLS + (("Bash",) if agent else ()))
        allowed = ",".join(READ_TOOLS + ((SEARCH,) if agent else ()))
        argv = [self.binary, "-p", "--output-format", "json"]
        if self.config.engine.model:
            argv += ["--model", self.config.engine.model]
        turns = 2 if resume else self.config.engine.max_turns
        argv += [
            "--max-turns",
            str(turns),
            "--max-budget-usd",
            f"{self.config.engine.budget_usd:g}",
            "--tools",
            tools,
            "--allowedTools",
            allowed,
            "--disallowedTools",
            ",".join(DENIED),
            "--strict-mcp-config",
            "--permission-mode",
            "dontAsk",
        ]
        if resume:
            argv += ["--resume", resume]
        return argv

    def stdin(self, prompt: str) -> str | None:
        return prompt

    def parse(self, done: Finished) -> Reply:
        data = json_object(done.stdout.strip())
        if data is None:
            if done.code:
                raise text_failure("claude", done)
            raise failure("claude printed no JSON result", "schema")
        u = obj(data, "usage")
        cost = amount(data.get("total_cost_usd"))
        usage = Usage(
            tokens_in=count(u.get("input_tokens")),
            tokens_out=count(u.get("output_tokens")),
            cache_read_tokens=count(u.get("cache_read_input_tokens")),
            cache_write_tokens=count(u.get("cache_creation_input_tokens")),
            cost_usd=cost or 0.0,
            cost_known=cost is not None,
            turns=count(data.get("num_turns")),
        )
        session = data.get("session_id")
        session = session if isinstance(session, str) else None
        subtype = data.get("subtype")
        if str(subtype).startswith("error_max"):  # error_max_turns, error_max_budget_usd
            raise failure(f"claude stopped at a limit ({subtype})", "limit", session)
        if data.get("is_error") or subtype != "success":
            text = str(data.get("result") or subtype or "error")
            status = data.get("api_error_status")
            kind = from_status(status) if isinstance(status, int) else from_text(text)
            raise failure(f"claude: {text[:300]}", kind, session)
        return Reply(str(data.get("result") or ""), usage, session)
