"""The `anthropic` engine: Claude through the Messages API, with read-only tools.

Tools come from one seam, `toolbox(context)`: the read-only tools of `issue_assistant.tools`
beside `submit_triage`, whose input schema is the answer schema; a bad tool call is answered
with the error, never raised. The stable prefix (tools, instructions, project, labels) is
marked for prompt caching. In the `agent` strategy the model must search at least once before
it may submit; the last allowed turn, a spent budget or little time left forces `submit_triage`.
Retries of transient HTTP failures are the SDK's own; errors are classified by their type.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from issue_assistant import tools
from issue_assistant.decision import answer_schema
from issue_assistant.engine_registry import register
from issue_assistant.engines.failures import EngineFailure, from_status
from issue_assistant.engines.llm import LLMEngine, LLMOptions, Run
from issue_assistant.errors import UserError

if TYPE_CHECKING:
    from issue_assistant.context import Context

DEFAULT_MODEL = "claude-sonnet-4-6"
SUBMIT = "submit_triage"
SEARCH = "search_issues"


@dataclass
class ToolResult:
    text: str
    issues: list[int] = field(default_factory=list)
    is_error: bool = False


class Toolbox(Protocol):
    """Read-only tools: their specs (Anthropic's format) and a call that never raises."""

    def specs(self) -> list[dict[str, Any]]: ...

    def call(self, name: str, args: dict[str, Any]) -> ToolResult: ...


class SharedTools:
    """The read-only tools of `issue_assistant.tools` (issues as of the moment; the checkout's
    files when the context has one), with the earlier issues each call showed."""

    def __init__(self, context: Context) -> None:
        self.box = tools.Toolbox.for_context(context)

    def specs(self) -> list[dict[str, Any]]:
        return self.box.anthropic_specs()

    def call(self, name: str, args: dict[str, Any]) -> ToolResult:
        before = set(self.box.shown)
        answer = self.box.call(name, args)
        return ToolResult(answer.text, sorted(self.box.shown - before), answer.is_error)


def toolbox(context: Context) -> Toolbox:
    """The seam: the read-only tools the engine offers."""
    return SharedTools(context)


class AnthropicOptions(LLMOptions):
    max_tokens: int = 2048


@register
class AnthropicEngine(LLMEngine):
    """Claude with tool use; needs ANTHROPIC_API_KEY (ANTHROPIC_BASE_URL to point elsewhere)."""

    name = "anthropic"
    Options = AnthropicOptions
    options: AnthropicOptions
    needs_network = True
    uses_tools = True
    default_strategy = "agent"
    provider = "anthropic"
    retries_itself = True

    @property
    def model(self) -> str:
        return self.config.engine.model or DEFAULT_MODEL

    def check_ready(self) -> None:
        try:
            import anthropic  # noqa: F401
        except ImportError:
            raise UserError("the anthropic engine needs the anthropic package") from None
        from issue_assistant.settings import current

        if not current().anthropic_api_key:
            raise UserError(
                "the anthropic engine needs ANTHROPIC_API_KEY: export it, or in a workflow set "
                "it from a repository secret (docs/engines.md)"
            )

    def client(self, run: Run):  # noqa: ANN201
        import anthropic

        from issue_assistant.settings import current

        self.check_ready()
        settings = current()
        return anthropic.Anthropic(
            api_key=settings.anthropic_api_key,
            base_url=settings.anthropic_base_url,
            timeout=max(1.0, min(self.config.engine.timeout_seconds, run.deadline.remaining())),
            max_retries=settings.max_retries,
        )

    def _create(self, run: Run, **request: Any) -> Any:
        """One Messages API call, counted and priced; failures classified by the SDK's types."""
        import anthropic

        try:
            reply = run.state["client"].messages.create(model=self.model, **request)
        except anthropic.APIStatusError as exc:
            raise EngineFailure(f"Anthropic API: {exc}", from_status(exc.status_code)) from exc
        except (anthropic.APIConnectionError, anthropic.APITimeoutError) as exc:
            raise EngineFailure(f"Anthropic API: {exc}", "transient") from exc
        except anthropic.APIError as exc:
            raise EngineFailure(f"Anthropic API: {exc}", "unknown") from exc
        u = reply.usage
        self.price(
            run,
            u.input_tokens,
            u.output_tokens,
            cache_read=getattr(u, "cache_read_input_tokens", None) or 0,
            cache_write=getattr(u, "cache_creation_input_tokens", None) or 0,
        )
        return reply

    def complete(self, run: Run, system: str, user: str) -> Any:
        run.state["client"] = self.client(run)
        box = toolbox(run.context) if self.strategy == "agent" else None
        offered = (box.specs() if box else []) + [
            {
                "name": SUBMIT,
                "description": "Submit the triage decision. Call it exactly once, at the end.",
                "input_schema": answer_schema(run.context.labels),
            }
        ]
        offered[-1] = {**offered[-1], "cache_control": {"type": "ephemeral"}}
        run.state.update(
            box=box,
            tools=offered,
            system=[{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}],
            messages=[{"role": "user", "content": user}],
        )
        return self._loop(run)

    def _loop(self, run: Run, forced: bool = False) -> Any:
        cfg = self.config.engine
        messages: list[dict[str, Any]] = run.state["messages"]
        while True:
            turn = run.usage.turns + 1
            forced = forced or turn >= cfg.max_turns or run.spent() or run.time_low()
            if forced and not run.usage.forced_submit and turn > 1:
                run.add(forced_submit=True)
            choice = {"type": "tool", "name": SUBMIT} if forced else {"type": "any"}
            reply = self._create(
                run,
                max_tokens=self.options.max_tokens,
                system=run.state["system"],
                messages=messages,
                tools=run.state["tools"],
                tool_choice=choice,
            )
            run.add(turns=1)
            calls = [b for b in reply.content if b.type == "tool_use"]
            messages.append({"role": "assistant", "content": _blocks(reply.content)})
            if not calls:
                run.state["pending"] = None
                raise EngineFailure(
                    f"the model stopped without an answer ({reply.stop_reason})", "schema"
                )
            results = []
            for call in calls:
                run.add(tool_calls=1)
                if call.name == SUBMIT:
                    if self.strategy == "agent" and not run.searched and not forced:
                        results.append(_result(call.id, "error: search the earlier issues first"))
                        continue
                    run.state["pending"] = call.id
                    return call.input
                found = run.state["box"].call(call.name, call.input) if run.state["box"] else None
                if found is None:
                    found = ToolResult(f"error: unknown tool {call.name}")
                if call.name == SEARCH:
                    run.searched += 1
                run.allowed.update(found.issues)
                results.append(_result(call.id, found.text, found.is_error))
            messages.append({"role": "user", "content": results})

    def reask(self, run: Run, error: str) -> Any:
        messages = run.state["messages"]
        text = f"error: {error}; submit again"
        pending = run.state.get("pending")
        if pending:
            messages.append({"role": "user", "content": [_result(pending, text)]})
        else:
            messages.append({"role": "user", "content": text})
        return self._loop(run, forced=True)

    def yes_no(self, run: Run, prompt: str) -> Any:
        reply = self._create(run, max_tokens=200, messages=[{"role": "user", "content": prompt}])
        return "".join(b.text for b in reply.content if b.type == "text")


def _result(tool_use_id: str, text: str, is_error: bool = False) -> dict[str, Any]:
    result = {"type": "tool_result", "tool_use_id": tool_use_id, "content": text}
    return {**result, "is_error": True} if is_error else result


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
