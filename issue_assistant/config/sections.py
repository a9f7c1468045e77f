"""`config.toml`: the engine, project, duplicates, label model, approval, index, backlog, context
and code sections, one typed `Config`; each `[engines.NAME]` table checked by its engine's
options."""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    Field,
    StrictBool,
    ValidationError,
    model_validator,
)

from issue_assistant.config.labels import Group, LabelName
from issue_assistant.config.strict import Strict, read_toml, validation_error
from issue_assistant.errors import UserError
from issue_assistant.tomllines import line_of

Strategy = Literal["zero-shot", "rag", "agent"]
STRATEGIES: tuple[Strategy, ...] = ("zero-shot", "rag", "agent")
# Engine tables that used to be top-level sections: [similar] is now [engines.similar].
MOVED = ("similar", "llama")

log = logging.getLogger(__name__)


ROLES = ("triage", "write", "maintain", "admin")
Role = Literal["triage", "write", "maintain", "admin"]
# A GitHub login (a bot's ends in `[bot]`): letters, digits, hyphens (underscores on Enterprise).
_LOGIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,38}(?:\[bot\])?")


def _login(login: str) -> str:
    if not _LOGIN.fullmatch(login):
        raise ValueError(f"{login!r} is not a GitHub login (like github-actions[bot])")
    return login


def _engine_name(name: str | None) -> str | None:
    """An engine name that `engines.create` knows (built-in, registered or an entry point)."""
    from issue_assistant.engine_registry import available, is_known

    if name and not is_known(name):
        raise ValueError(f"unknown engine {name!r} (available: {', '.join(available())})")
    return name


Login = Annotated[str, AfterValidator(_login)]


class EngineConfig(Strict):
    name: Annotated[str, AfterValidator(_engine_name)] = "similar"
    model: str = ""
    max_turns: int = Field(default=8, ge=1)
    budget_usd: float = Field(default=0.50, ge=0)
    timeout_seconds: float = Field(default=300, gt=0)
    fallback: Annotated[str | None, AfterValidator(_engine_name)] = "similar"
    # zero-shot (issue + labels), rag (+ similar issues), agent (+ read-only tools); empty: the
    # engine's own default (rag for llama, agent for API and command-line engines).
    strategy: Strategy | None = None


class ProjectConfig(Strict):
    description: str = ""
    context_dir: str = ".issue-assistant"


class DuplicatesConfig(Strict):
    candidates: int = Field(default=8, ge=1, le=50)
    # None: calibrated on the repository's known duplicates, else the shared data's prior
    threshold: float | None = Field(default=None, gt=0, le=1)
    margin: float = Field(default=0.05, ge=0, le=1)
    close: bool = False
    target_precision: float = Field(default=0.8, gt=0, le=1)


class LabelModelConfig(Strict):
    """`[labels]`: how the `similar` engine proposes labels (tiers: `learn/tiers.py`)."""

    model: Literal["learned", "vote"] = "learned"
    # A proposal whose measured precision reaches this is "high" ("very likely" in words).
    target_precision: float = Field(default=0.9, gt=0, le=1)
    # The floor: below it on the repository's history, a group proposes nothing (and says why).
    min_precision: float = Field(default=0.6, ge=0, le=1)
    # The floor of the groups that take one label (type, priority): every issue has a type, so a
    # best guess right half of the time is still worth proposing.
    type_min_precision: float = Field(default=0.5, ge=0, le=1)
    # The lowest tier proposed: "high" keeps only high-confidence labels.
    propose: Literal["high", "likely", "possible"] = "possible"

    @model_validator(mode="after")
    def _floor_under_target(self) -> LabelModelConfig:
        for key in ("min_precision", "type_min_precision"):
            if getattr(self, key) > self.target_precision:
                raise ValueError(
                    f"{key} ({getattr(self, key)}) must not exceed target_precision "
                    f"({self.target_precision})"
                )
        return self


class ApprovalConfig(Strict):
    pending_label: LabelName = "assistant: pending"
    opt_out_label: LabelName = "assistant: skip"
    bot_login: Login = "github-actions[bot]"
    writes: Literal["off", "dry-run", "live"] | None = None
    roles: list[Role] = Field(default_factory=lambda: list(ROLES))


class BacklogConfig(Strict):
    """`[backlog]`: triaging the open issues nobody labelled (`issue-assistant backlog`)."""

    # An open issue lacking a label of any of these groups is selected (those lacking the
    # first group come first). Unset: the groups the open issues lack (`LabelsConfig.lacking`).
    groups: list[Group] | None = Field(default=None, min_length=1)
    order: Literal["oldest", "newest"] = "oldest"
    limit: int = Field(default=10, ge=1, le=500)  # pending comments a run posts at most
    per_day: int = Field(default=30, ge=0, le=5000)  # ... and a UTC day, over all runs
    # Left alone while a maintainer's latest comment is younger than this many days.
    answered_days: int = Field(default=14, ge=0, le=3650)
    # Requests a run leaves unspent this hour (X-RateLimit-Remaining).
    rate_margin: int = Field(default=100, ge=0, le=5000)
    # The proposed original of a duplicate group.
    original: Literal["oldest", "most-discussed"] = "oldest"


# What finds candidates beside BM25: sentence embeddings (the `embeddings` extra), the word
# vectors shipped with the package, or nothing.
VectorKind = Literal["sentences", "words", "off"]


class IndexConfig(Strict):
    # "": the default place (`Settings.cache_root`: $RUNNER_TEMP in Actions, else the user's
    # cache folder); a relative path is taken from the current folder.
    cache_dir: str = ""
    embeddings: StrictBool = False
    word_vectors: StrictBool = True

    @property
    def vectors(self) -> VectorKind:
        """Sentence embeddings where asked for, else the word vectors unless switched off."""
        if self.embeddings:
            return "sentences"
        return "words" if self.word_vectors else "off"


def _migrate(data: Any) -> tuple[Any, list[str]]:
    """`data` with the old top-level engine tables moved under `engines`; the moved names."""
    if not isinstance(data, dict) or not any(k in data for k in MOVED):
        return data, []
    data = dict(data)
    engines = dict(data.get("engines") or {})
    moved = []
    for name in MOVED:
        if name in data:
            if name in engines:
                raise ValueError(f"[{name}] and [engines.{name}] both given; keep [engines.{name}]")
            table = data.pop(name)
            engines[name] = table.model_dump() if isinstance(table, BaseModel) else table
            moved.append(name)
    data["engines"] = engines
    return data, moved


class ContextConfig(Strict):
    """What the context shows beside similar issues: releases and discussions."""

    releases: int = Field(default=5, ge=0, le=50)
    discussions: int = Field(default=5, ge=0, le=50)
    see_also_threshold: float = Field(default=0.45, ge=0, le=1)


class CodeConfig(Strict):
    """The code index over the checkout, and the likely files in the comment."""

    # "auto": the Action's workspace (or the current directory) when it is a clone of the
    # repository; "": no code index; else the checkout's path.
    checkout: str = "auto"
    likely_files: int = Field(default=5, ge=0, le=20)
    # The comment shows a likely file only when the precision measured for files at its standing
    # (rank, and a clear lead for the first: `likely/likely_files.toml`) is at least this; at most
    # five.
    min_precision: float = Field(default=0.5, ge=0, le=1)
    # The weights and precision table of the likely files ("": the one shipped, measured on
    # huggingface/datasets); `bench/likely_files.py --calibration FILE` measures your repository's.
    calibration: str = ""
    max_file_kb: int = Field(default=256, ge=1, le=10_000)
    max_files: int = Field(default=20_000, ge=1)
    area_boost: float = Field(default=0.3, ge=0, le=1)


class Config(Strict):
    engine: EngineConfig = EngineConfig()
    project: ProjectConfig = ProjectConfig()
    duplicates: DuplicatesConfig = DuplicatesConfig()
    labels: LabelModelConfig = LabelModelConfig()
    approval: ApprovalConfig = ApprovalConfig()
    index: IndexConfig = IndexConfig()
    backlog: BacklogConfig = BacklogConfig()
    # One table per engine, `[engines.NAME]`, validated by that engine's own `Options` model.
    engines: dict[str, dict[str, Any]] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _moved_tables(cls, data: Any) -> Any:
        return _migrate(data)[0]

    def options(self, name: str) -> BaseModel:
        """The typed options of engine `name` (its `[engines.NAME]` table, or the defaults)."""
        from issue_assistant.engine_registry import options_class

        return options_class(name).model_validate(self.engines.get(name, {}))

    @property
    def similar(self) -> Any:
        """`[engines.similar]`: a `SimilarConfig` (`config/engine_options.py`)."""
        return self.options("similar")

    def with_engine(self, **changes: Any) -> Config:
        """A copy with `[engine]` keys changed (None values are left as they are)."""
        update = {k: v for k, v in changes.items() if v is not None}
        if not update:
            return self
        return self.model_copy(update={"engine": self.engine.model_copy(update=update)})

    context: ContextConfig = ContextConfig()
    code: CodeConfig = CodeConfig()


def load_config(path: str | Path | None) -> Config:
    if path is None:
        return Config()
    p = Path(path)
    text, data = read_toml(p)
    try:
        data, moved = _migrate(data)
    except ValueError as exc:
        raise UserError(str(exc), where=str(p)) from None
    for name in moved:
        line = line_of(text, (name,))
        log.warning("%s: [%s] is deprecated: move it to [engines.%s]", f"{p}:{line}", name, name)
    try:
        config = Config.model_validate(data)
    except ValidationError as exc:
        raise validation_error(p, text, exc, model=Config) from None
    _check_engine_tables(p, text, config, moved)
    return config


def _check_engine_tables(p: Path, text: str, config: Config, moved: list[str]) -> None:
    """Each `[engines.NAME]` validated by its engine's options, errors naming file:line and key."""
    from issue_assistant.engine_registry import available, options_class

    for name, table in config.engines.items():
        where = (name,) if name in moved else ("engines", name)
        try:
            cls = options_class(name)
        except UserError:
            line = line_of(text, where)
            raise UserError(
                f"{'.'.join(where)}: unknown engine {name!r} (available: {', '.join(available())})",
                where=f"{p}:{line}" if line else str(p),
            ) from None
        try:
            cls.model_validate(table)
        except ValidationError as exc:
            raise validation_error(p, text, exc, where, model=cls) from None
