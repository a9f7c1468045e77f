"""Engines: turn a context into a decision. Built-ins register the way a plugin would."""

from issue_assistant.engines.base import Engine, create
from issue_assistant.engines.registry import available, register

__all__ = ["Engine", "available", "create", "register"]
