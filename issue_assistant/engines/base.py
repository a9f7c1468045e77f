"""The engine contract (the registry of names is `engine_registry.py`).

An engine is one class: its `name`, its typed `Options` (read from `[engines.NAME]`), the
strategies it can run, `check_ready()` (once, before any issue) and `decide(context)`.
"""

from __future__ import annotations

import threading
import time
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, ClassVar

from pydantic import BaseModel, ConfigDict

from issue_assistant.engine_registry import engine_class
from issue_assistant.errors import UserError

if TYPE_CHECKING:
    from issue_assistant.config.labels import LabelsConfig
    from issue_assistant.config.sections import Config, Strategy
    from issue_assistant.context import Context
    from issue_assistant.decision import Decision
    from issue_assistant.index.duplicates import DuplicateSettings


class EngineOptions(BaseModel):
    """An engine's settings, `[engines.NAME]` in config.toml: strict, unknown keys are errors."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Deadline:
    """The wall-clock budget of one issue (`[engine] timeout_seconds`).

    `cancel()` is the pipeline giving up on the engine: from then on nothing remains, and an
    engine that runs in this process (a local model) stops at its next check of `cancelled`."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.end = time.monotonic() + seconds
        self.cancelled = threading.Event()

    def remaining(self) -> float:
        if self.cancelled.is_set():
            return 0.0
        return max(0.0, self.end - time.monotonic())

    def cancel(self) -> None:
        self.cancelled.set()


class Engine(ABC):
    """One way of deciding. Capabilities are class attributes; `decide` is the one method."""

    name: ClassVar[str]
    Options: ClassVar[type[BaseModel]] = EngineOptions
    # an instance of `Options`, read from config.toml's `[engine.NAME]` (each engine narrows it)
    options: BaseModel
    needs_network: ClassVar[bool] = False
    uses_llm: ClassVar[bool] = False
    uses_tools: ClassVar[bool] = False
    strategies: ClassVar[tuple[Strategy, ...]] = ("rag",)
    default_strategy: ClassVar[Strategy] = "rag"
    # True when the engine retries transient failures itself (an SDK's retries).
    retries_itself: ClassVar[bool] = False
    # True when the engine reads the learned state (label models, duplicate weights) from the
    # moment (`learn.learned`): evaluate fits each time bucket's ahead for it.
    learns: ClassVar[bool] = False

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

    def check_ready(self) -> None:  # noqa: B027 - most engines need nothing
        """Check, once before any issue, that the engine can run: a UserError naming the fix."""

    def warm(self, context: Context) -> None:  # noqa: B027 - most engines need nothing
        """Before `decide`, outside its timing: load (or fit) what answering `context` needs."""

    def duplicate_settings(self, context: Context) -> DuplicateSettings | None:
        """The duplicate weights and threshold the engine decides with; None when it has none."""
        return None

    @abstractmethod
    def decide(self, context: Context) -> Decision:
        """Propose labels, a duplicate and questions for `context.issue`; EngineError on failure."""


def create(
    name: str, config: Config, labels: LabelsConfig, strategy: Strategy | None = None
) -> Engine:
    return engine_class(name)(config, labels, strategy)
