"""Which engines exist: built-in names, registered classes and `issue_assistant.engines` entry
points, and each engine's options model.

It sits below the configuration (which checks `[engine] name` and `[engines.NAME]` with it) and
below the engines (which register here), so it imports neither: engine modules are loaded by
name, when first asked for.
"""

from __future__ import annotations

from importlib import import_module
from importlib.metadata import entry_points
from typing import Any, TypeVar

from pydantic import BaseModel

from issue_assistant.errors import UserError

E = TypeVar("E")

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

#: engines for the tests (scriptable): usable by name, never offered in a list or an error
TEST_ENGINES = frozenset({"fake", "fake-llm"})

#: built-in engines whose options model lives in a light module beside the engine's: checking
#: `[engines.NAME]` then needs no import of the engine (similar's pulls in numpy and the learner)
BUILTIN_OPTIONS = {"similar": ("issue_assistant.config.engine_options", "SimilarConfig")}

_registry: dict[str, Any] = {}


def register(cls: E) -> E:
    """Class decorator: make an engine available by its `name`."""
    _registry[cls.name] = cls
    return cls


def _load(name: str) -> Any | None:
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
    """The engines a user can choose (the test engines left out)."""
    names = set(BUILTINS) | set(_registry)
    names |= {ep.name for ep in entry_points(group="issue_assistant.engines")}
    return sorted(names - TEST_ENGINES)


def is_known(name: str) -> bool:
    """Whether `name` is an engine, looking at the entry points only when it is no built-in
    (scanning every installed distribution is slow)."""
    if name in BUILTINS or name in _registry:
        return True
    return any(ep.name == name for ep in entry_points(group="issue_assistant.engines"))


def engine_class(name: str) -> Any:
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
