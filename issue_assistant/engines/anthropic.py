"""The `anthropic` engine: Claude through the Messages API, with read-only tools.

Tools: `search_issues` and `get_issue` (earlier issues as they were at the moment) and
`submit_triage`, whose input schema is the answer schema. The last allowed turn, or a spent
budget, forces `submit_triage`. Retries are the SDK's own; any API error is an EngineError.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from issue_assistant.decision import Decision, Usage, answer_schema
from issue_assistant.engines.base import Engine, register
from issue_assistant.engines.prompt import parse_answer, prompts
from issue_assistant.errors import EngineError, UserError
from issue_assistant.render import excerpt

if TYPE_CHECKING:
    from issue_assistant.context import Context

DEFAULT_MODEL = "claude-sonnet-4-6"
# Dollars per million input and output tokens, by model name prefix.
PRICES = {
    "claude-opus-4-1": (15.0, 75.0),
    "claude-opus-4": (15.0, 75.0),
    "claude-sonnet-4": (3.0, 15.0),
    "claude-haiku-4": (1.0, 5.0),
    "claude-3-5-haiku": (0.8, 4.0),
}
SUBMIT = "submit_triage"


def price(model: str, tokens_in: int, tokens_out: int) -> float:
    for prefix, (p_in, p_out) in PRICES.items():
        if model.startswith(prefix):
            return (tokens_in * p_in + tokens_out * p_out) / 1_000_000
    return 0.0


def tools(context: Context) -> list[dict[str, Any]]:
    return [
        {
            "name": "search_issues",
            "description": "Search the repository's earlier issues (as they were when the new "
            "issue was opened). Returns number, title, state, labels and an excerpt.",
            "input_schema": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "words to look for"},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 20},
                },
                "required": ["query"],
            },
        },
        {
            "name": "get_issue",
            "description": "Read one earlier issue in full, as it was when the new one was opened.",
            "input_schema": {
                "type": "object",
                "properties": {"number": {"type": "integer"}},
                "required": ["number"],
            },
        },
        {
            "name": SUBMIT,
            "description": "Submit the triage decision. Call it exactly once, at the end.",
            "input_schema": answer_schema(context.labels),
        },
    ]


def run_tool(context: Context, name: str, args: dict[str, Any]) -> str:
    """A read-only tool's answer as text (errors are answers too, never exceptions)."""
    if name == "search_issues":
        limit = max(1, min(int(args.get("limit") or 8), 20))
        found = context.search(str(args.get("query", "")), limit=limit)
        if not found:
            return "No matching earlier issues."
        return "\n".join(
            f"#{c.issue.number} [{c.issue.state}] {excerpt(c.issue.title, 120)} "
            f"(labels: {', '.join(c.issue.labels) or 'none'}): {excerpt(c.issue.body, 200)}"
            for c in found
        )
    if name == "get_issue":
        try:
            number = int(args.get("number"))  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return "error: number must be an integer"
        issue = context.get_issue(number)
        if issue is None:
            return f"error: no earlier issue #{number}"
        return (
            f"#{issue.number} [{issue.state}] {issue.title}\nlabels: "
            f"{', '.join(issue.labels) or 'none'}\n\n{excerpt(issue.body, 3000)}"
        )
    return f"error: unknown tool {name}"


@register
class AnthropicEngine(Engine):
    """Claude with tool use; needs ANTHROPIC_API_KEY (ANTHROPIC_BASE_URL to point elsewhere)."""

    name = "anthropic"
    needs_network = True
    uses_llm = True
    uses_tools = True

    @property
    def model(self) -> str:
        return self.config.engine.model or DEFAULT_MODEL

    def client(self):  # noqa: ANN201
        import anthropic

        from issue_assistant.settings import current

        settings = current()
        if not settings.anthropic_api_key:
            raise UserError("the anthropic engine needs ANTHROPIC_API_KEY")
        return anthropic.Anthropic(
            api_key=settings.anthropic_api_key,
            base_url=settings.anthropic_base_url,
            timeout=self.config.engine.timeout_seconds,
            max_retries=settings.max_retries,
        )

    def decide(self, context: Context) -> Decision:
        import anthropic

        client = self.client()
        cfg = self.config.engine
        system, user = prompts(context)
        offered = tools(context)
        messages: list[dict[str, Any]] = [{"role": "user", "content": user}]
        usage = Usage()
        start = time.perf_counter()
        for turn in range(1, cfg.max_turns + 1):
            forced = turn == cfg.max_turns or usage.cost_usd >= cfg.budget_usd
            choice = {"type": "tool", "name": SUBMIT} if forced else {"type": "any"}
            try:
                reply = client.messages.create(
                    model=self.model,
                    max_tokens=2048,
                    system=system,
                    messages=messages,
                    tools=offered,
                    tool_choice=choice,
                )
            except anthropic.APIError as exc:
                raise EngineError(f"Anthropic API: {exc}") from exc
            t_in, t_out = reply.usage.input_tokens, reply.usage.output_tokens
            usage = usage.model_copy(
                update={
                    "turns": turn,
                    "tokens_in": usage.tokens_in + t_in,
                    "tokens_out": usage.tokens_out + t_out,
                    "cost_usd": usage.cost_usd + price(self.model, t_in, t_out),
                    "forced_submit": forced,
                }
            )
            calls = [b for b in reply.content if b.type == "tool_use"]
            if not calls:
                raise EngineError(f"the model stopped without an answer ({reply.stop_reason})")
            messages.append({"role": "assistant", "content": _blocks(reply.content)})
            results = []
            for call in calls:
                usage = usage.model_copy(update={"tool_calls": usage.tool_calls + 1})
                if call.name == SUBMIT:
                    try:
                        decision = parse_answer(call.input)
                    except EngineError as exc:
                        if forced:
                            raise
                        results.append(self._result(call.id, f"error: {exc}; submit again"))
                        continue
                    usage = usage.model_copy(update={"latency_s": time.perf_counter() - start})
                    return decision.model_copy(
                        update={"engine": self.name, "model": self.model, "usage": usage}
                    )
                results.append(self._result(call.id, run_tool(context, call.name, call.input)))
            messages.append({"role": "user", "content": results})
        raise EngineError(f"no answer within {cfg.max_turns} turns")

    @staticmethod
    def _result(tool_use_id: str, text: str) -> dict[str, Any]:
        return {"type": "tool_result", "tool_use_id": tool_use_id, "content": text}


def _blocks(content: list[Any]) -> list[dict[str, Any]]:
    """The assistant's reply as request blocks (text and tool use only)."""
    out: list[dict[str, Any]] = []
    for block in content:
        if block.type == "text":
            out.append({"type": "text", "text": block.text})
        elif block.type == "tool_use":
            out.append(
                {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
            )
    return out
