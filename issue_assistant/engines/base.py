"""The engine contract and the registry (built-ins and `issue_assistant.engines` entry points).

An engine is one class: its `name`, its typed `Options` (read from `[engines.NAME]`), the
strategies it can run, `prepare()` (once, before any issue) and `decide(context)`.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from importlib import import_module
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, ClassVar

from pydantic import BaseModel, ConfigDict

from issue_assistant.errors import UserError

if TYPE_CHECKING:
    from issue_assistant.config import Config, LabelsConfig, Strategy
    from issue_assistant.context import Context
    from issue_assistant.decision import Decision

BUILTINS = {
    "similar": "issue_assistant.engines.similar",
    "fake": "issue_assistant.engines.fake",
    "fake-llm": "issue_assistant.engines.fake",
    "anthropic": "issue_assistant.engines.anthropic",
    "llama": "issue_assistant.engines.llama",
    "claude": "issue_assistant.engines.claude",
    "gemini": "issue_assistant.engines.gemini",
    "copilot": "issue_assistant.engines.copilot",
}

#: built-in engines whose options model lives outside the engine's module: checking
#: `[engines.NAME]` then needs no import of the engine (similar's pulls in numpy and the learner)
BUILTIN_OPTIONS = {"similar": ("issue_assistant.config", "SimilarConfig")}

_registry: dict[str, type[Engine]] = {}


class EngineOptions(BaseModel):
    """An engine's settings, `[engines.NAME]` in config.toml: strict, unknown keys are errors."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Deadline:
    """The wall-clock budget of one issue (`[engine] timeout_seconds`)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.end = time.monotonic() + seconds

    def remaining(self) -> float:
        return max(0.0, self.end - time.monotonic())


class Engine(ABC):
    """One way of deciding. Capabilities are class attributes; `decide` is the one method."""

    name: ClassVar[str]
    Options: ClassVar[type[BaseModel]] = EngineOptions
    needs_network: ClassVar[bool] = False
    uses_llm: ClassVar[bool] = False
    uses_tools: ClassVar[bool] = False
    strategies: ClassVar[tuple[Strategy, ...]] = ("rag",)
    default_strategy: ClassVar[Strategy] = "rag"
    # True when the engine retries transient failures itself (an SDK's retries).
    retries_itself: ClassVar[bool] = False

    def __init__(
        self, config: Config, labels: LabelsConfig, strategy: Strategy | None = None
    ) -> None:
        self.config = config
        self.labels = labels
        self.options = config.options(self.name)
        chosen = strategy or self.default_strategy
        if chosen not in self.strategies:
            raise UserError(
                f"the {self.name} engine cannot run the {chosen!r} strategy "
                f"(it runs: {', '.join(self.strategies)})"
            )
        self.strategy: Strategy = chosen
        self.deadline = Deadline(config.engine.timeout_seconds)

    @property
    def model(self) -> str:
        return self.config.engine.model

    def prepare(self) -> None:  # noqa: B027 - most engines need nothing
        """Check, once before any issue, that the engine can run: a UserError naming the fix."""

    def warm(self, context: Context) -> None:  # noqa: B027 - most engines need nothing
        """Before `decide`, outside its timing: load (or fit) what answering `context` needs."""

    @abstractmethod
    def decide(self, context: Context) -> Decision:
        """Propose labels, a duplicate and questions for `context.issue`; EngineError on failure."""


def register(cls: type[Engine]) -> type[Engine]:
    """Class decorator: make an engine available by its `name`."""
    _registry[cls.name] = cls
    return cls


def _load(name: str) -> type[Engine] | None:
    if name in _registry:
        return _registry[name]
    if name in BUILTINS:
        import_module(BUILTINS[name])
        return _registry.get(name)
    for ep in entry_points(group="issue_assistant.engines"):
        if ep.name == name:
            cls = ep.load()
            _registry[name] = cls
            return cls
    return None


def available() -> list[str]:
    names = set(BUILTINS) | set(_registry)
    names |= {ep.name for ep in entry_points(group="issue_assistant.engines")}
    return sorted(names)


def is_known(name: str) -> bool:
    """Whether `name` is an engine, looking at the entry points only when it is no built-in
    (scanning every installed distribution costs about 20 ms)."""
    if name in BUILTINS or name in _registry:
        return True
    return any(ep.name == name for ep in entry_points(group="issue_assistant.engines"))


def engine_class(name: str) -> type[Engine]:
    cls = _load(name)
    if cls is None:
        raise UserError(f"unknown engine {name!r} (available: {', '.join(available())})")
    return cls


def options_class(name: str) -> type[BaseModel]:
    """The options model of engine `name` (UserError for an unknown engine)."""
    if name in BUILTIN_OPTIONS and name not in _registry:
        module, attr = BUILTIN_OPTIONS[name]
        return getattr(import_module(module), attr)
    return engine_class(name).Options


def create(
    name: str, config: Config, labels: LabelsConfig, strategy: Strategy | None = None
) -> Engine:
    return engine_class(name)(config, labels, strategy)
