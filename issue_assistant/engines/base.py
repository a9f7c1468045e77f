"""The engine base class and the registry (built-ins and `issue_assistant.engines` entry points)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from importlib import import_module
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, ClassVar

from issue_assistant.errors import UserError

if TYPE_CHECKING:
    from issue_assistant.config import Config, LabelsConfig
    from issue_assistant.context import Context
    from issue_assistant.decision import Decision

BUILTINS = {
    "similar": "issue_assistant.engines.similar",
    "fake": "issue_assistant.engines.fake",
    "anthropic": "issue_assistant.engines.anthropic",
    "llama": "issue_assistant.engines.llama",
}

_registry: dict[str, type[Engine]] = {}


class Engine(ABC):
    """One way of deciding. Capabilities are class attributes; `decide` is the one method."""

    name: ClassVar[str]
    needs_network: ClassVar[bool] = False
    uses_llm: ClassVar[bool] = False
    uses_tools: ClassVar[bool] = False

    def __init__(self, config: Config, labels: LabelsConfig) -> None:
        self.config = config
        self.labels = labels

    @property
    def model(self) -> str:
        return self.config.engine.model

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


def create(name: str, config: Config, labels: LabelsConfig) -> Engine:
    cls = _load(name)
    if cls is None:
        raise UserError(f"unknown engine {name!r} (available: {', '.join(available())})")
    return cls(config, labels)
