"""The read-only tool set's machinery: input models, the registry, and one `Toolbox.call`.

A tool is a function `(box, args) -> str` with a strict pydantic input model, registered with
`@tool(...)`. `Toolbox.call(name, arguments)` never raises: unknown names, arguments that are not
an object, wrong types, missing or unknown keys and failures inside a tool all come back as an
error result the model can read and correct. Nothing here writes anywhere.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, ValidationError

from issue_assistant.errors import ToolFailure
from issue_assistant.render import excerpt, render
from issue_assistant.tools.checkout import Checkout
from issue_assistant.tracker.models import Issue

if TYPE_CHECKING:
    from issue_assistant.context import Context
    from issue_assistant.moment import Moment

log = logging.getLogger(__name__)


class ToolInput(BaseModel):
    """Base of every tool's arguments: strict types, no unknown keys."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


@dataclass(frozen=True)
class ToolResult:
    text: str
    is_error: bool = False


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    input: type[ToolInput]
    run: Callable[[Toolbox, Any], str]
    needs_checkout: bool = False
    when: Callable[[Toolbox], bool] | None = None  # offered only where this holds

    def available(self, box: Toolbox) -> bool:
        if self.needs_checkout and box.checkout is None:
            return False
        return self.when is None or bool(self.when(box))

    def schema(self) -> dict[str, Any]:
        """The JSON schema of the arguments (for the Messages API and MCP)."""
        schema = self.input.model_json_schema()
        schema.pop("title", None)
        for prop in schema.get("properties", {}).values():
            prop.pop("title", None)
        schema.setdefault("properties", {})
        schema["additionalProperties"] = False
        return schema


TOOLS: dict[str, Tool] = {}


def tool(
    name: str,
    input: type[ToolInput],
    *,
    needs_checkout: bool = False,
    when: Callable[[Toolbox], bool] | None = None,
) -> Callable[[Callable[[Toolbox, Any], str]], Callable[[Toolbox, Any], str]]:
    """Register a read-only tool; its description is the function's docstring.

    `needs_checkout`: offered only with a checkout; `when(box)`: offered only where it holds
    (e.g. only when the moment knows its releases).
    """

    def register(fn: Callable[[Toolbox, Any], str]) -> Callable[[Toolbox, Any], str]:
        doc = " ".join((fn.__doc__ or name).split())
        TOOLS[name] = Tool(name, doc, input, fn, needs_checkout, when)
        return fn

    return register


def validation_message(exc: ValidationError) -> str:
    """One line per problem: where (the argument) and what."""
    parts = []
    for err in exc.errors(include_url=False):
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        got = err.get("input")
        shown = f" (got {excerpt(repr(got), 60)})" if err["type"] != "missing" else ""
        parts.append(f"{where}: {err['msg']}{shown}")
    return "; ".join(parts)


class Toolbox:
    """The tools available at one moment (and on a checkout, when there is one); with an issue
    under analysis, its searches show only issues created before it, never itself."""

    def __init__(
        self, moment: Moment, issue: Issue | None = None, checkout: Checkout | None = None
    ) -> None:
        self.moment = moment
        self.issue = issue
        self.checkout = checkout
        # The earlier issues the tools have shown: an engine may propose only those as originals.
        self.shown: set[int] = set()
        # The labels used by the moment of a point-in-time view (`list_labels`), read once.
        self.labels_used: set[str] | None = None

    @classmethod
    def for_context(cls, context: Context, root: str | Path | None = None) -> Toolbox:
        """The tools an engine offers on `context` (its checkout's files, or `root`'s)."""
        root = root if root is not None else context.checkout
        return cls(context.moment, context.issue, Checkout(root) if root is not None else None)

    def tools(self) -> list[Tool]:
        available = [t for t in TOOLS.values() if t.available(self)]
        return sorted(available, key=lambda t: t.needs_checkout)  # issues first, then files

    def names(self) -> list[str]:
        return [t.name for t in self.tools()]

    def anthropic_specs(self) -> list[dict[str, Any]]:
        """Tool definitions for the Messages API."""
        return [
            {"name": t.name, "description": t.description, "input_schema": t.schema()}
            for t in self.tools()
        ]

    def call(self, name: str, arguments: object) -> ToolResult:
        """Run one tool; every problem is an error result, never an exception."""
        found = {t.name: t for t in self.tools()}.get(name) if isinstance(name, str) else None
        if found is None:
            return self._error(
                name, f"unknown tool {excerpt(repr(name), 60)}; tools: {', '.join(self.names())}"
            )
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            kind = type(arguments).__name__
            return self._error(name, f"invalid arguments: they must be a JSON object, not {kind}")
        try:
            args = found.input.model_validate(arguments)
        except ValidationError as exc:
            return self._error(name, f"invalid arguments: {validation_message(exc)}")
        try:
            return ToolResult(found.run(self, args).rstrip())
        except ToolFailure as exc:
            return self._error(name, str(exc))
        except Exception as exc:  # a bug in a tool must not end the engine's turn loop
            log.warning("tool %s failed: %s: %s", name, type(exc).__name__, exc)
            return self._error(name, f"the tool failed ({type(exc).__name__})")

    @staticmethod
    def _error(name: object, message: str) -> ToolResult:
        return ToolResult(render("tools/error.txt.j2", message=message).rstrip(), True)
