"""Engines: turn a context into a decision. Built-ins register the way a plugin would."""

from issue_assistant.engine_registry import available, register
from issue_assistant.engines.base import Engine, create

__all__ = ["Engine", "available", "create", "register"]
