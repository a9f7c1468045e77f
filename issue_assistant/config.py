"""The two configuration files, parsed into typed objects in one place.

`labels.toml` holds the label groups; `config.toml` the engine, project and feature sections.
Unknown keys, wrong types, duplicate labels and labels in two groups are errors naming file:line.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from issue_assistant.errors import UserError
from issue_assistant.tomllines import line_of

GROUPS = ("type", "area", "topic", "priority")
Group = Literal["type", "area", "topic", "priority"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Ask(_Strict):
    """A piece of information a report of this type must contain."""

    what: str = Field(min_length=1)
    question: str = Field(min_length=1)
    detect: list[str] = Field(default_factory=list)

    @field_validator("detect")
    @classmethod
    def _regexes(cls, patterns: list[str]) -> list[str]:
        for pattern in patterns:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"bad regular expression {pattern!r}: {exc}") from None
        return patterns

    def present_in(self, text: str) -> bool:
        return any(re.search(p, text, re.IGNORECASE | re.MULTILINE) for p in self.detect)


class Label(_Strict):
    name: str = Field(min_length=1)
    description: str = ""
    propose: bool = True


class TypeLabel(Label):
    ask: list[Ask] = Field(default_factory=list)


class LabelsConfig(_Strict):
    needs_info: str | None = None
    max_areas: int = Field(default=3, ge=0)
    max_topics: int = Field(default=3, ge=0)
    type: list[TypeLabel] = Field(default_factory=list)
    area: list[Label] = Field(default_factory=list)
    topic: list[Label] = Field(default_factory=list)
    priority: list[Label] = Field(default_factory=list)

    def group(self, name: Group) -> list[Label]:
        return list(getattr(self, name))

    def group_of(self, label: str) -> Group | None:
        for g in GROUPS:
            if any(lab.name == label for lab in getattr(self, g)):
                return g  # type: ignore[return-value]
        return None

    def proposable(self, group: Group) -> list[str]:
        return [lab.name for lab in getattr(self, group) if lab.propose]

    def all_names(self) -> set[str]:
        return {lab.name for g in GROUPS for lab in getattr(self, g)}

    def type_label(self, name: str | None) -> TypeLabel | None:
        return next((t for t in self.type if t.name == name), None)

    def limit(self, group: Group) -> int:
        return {"type": 1, "priority": 1, "area": self.max_areas, "topic": self.max_topics}[group]


class EngineConfig(_Strict):
    name: str = "similar"
    model: str = ""
    max_turns: int = Field(default=8, ge=1)
    budget_usd: float = Field(default=0.50, ge=0)
    timeout_seconds: float = Field(default=300, gt=0)
    fallback: str | None = "similar"


class ProjectConfig(_Strict):
    description: str = ""
    context_dir: str = ".issue-assistant"


class SimilarConfig(_Strict):
    neighbors: int = Field(default=15, ge=1)
    min_confidence: float = Field(default=0.4, ge=0, le=1)


class LlamaConfig(_Strict):
    """The `llama` engine: a local GGUF model (its path is `[engine] model`)."""

    n_ctx: int = Field(default=4096, ge=512)
    max_tokens: int = Field(default=384, ge=16)
    threads: int = Field(default=0, ge=0)
    chat_format: str = ""


class DuplicatesConfig(_Strict):
    candidates: int = Field(default=8, ge=1, le=50)
    threshold: float = Field(default=0.55, ge=0, le=1)
    close: bool = False
    target_precision: float = Field(default=0.8, gt=0, le=1)


class LabelModelConfig(_Strict):
    """`[labels]`: how the `similar` engine proposes labels."""

    model: Literal["learned", "vote"] = "learned"
    target_precision: float = Field(default=0.9, gt=0, le=1)


class ApprovalConfig(_Strict):
    pending_label: str = "assistant: pending"
    opt_out_label: str = "assistant: skip"
    bot_login: str = "github-actions[bot]"
    writes: Literal["off", "dry-run", "live"] | None = None
    roles: list[str] = Field(default_factory=lambda: ["triage", "write", "maintain", "admin"])


class IndexConfig(_Strict):
    cache_dir: str = ".cache/issue-assistant"


class Config(_Strict):
    engine: EngineConfig = EngineConfig()
    project: ProjectConfig = ProjectConfig()
    similar: SimilarConfig = SimilarConfig()
    llama: LlamaConfig = LlamaConfig()
    duplicates: DuplicatesConfig = DuplicatesConfig()
    labels: LabelModelConfig = LabelModelConfig()
    approval: ApprovalConfig = ApprovalConfig()
    index: IndexConfig = IndexConfig()


def _parse(path: Path) -> tuple[str, dict]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UserError(f"cannot read ({exc.strerror})", where=str(path)) from None
    try:
        return text, tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"not valid TOML: {exc}", where=str(path)) from None


def _validation_error(path: Path, text: str, exc: ValidationError) -> UserError:
    err = exc.errors()[0]
    loc = tuple(err["loc"])
    line = line_of(text, loc)
    key = ".".join(str(p) for p in loc)
    msg = err["msg"]
    if err["type"] == "extra_forbidden":
        msg = "unknown key"
    where = f"{path}:{line}" if line else str(path)
    return UserError(f"{key}: {msg}", where=where)


def load_labels(path: str | Path) -> LabelsConfig:
    p = Path(path)
    text, data = _parse(p)
    try:
        labels = LabelsConfig.model_validate(data)
    except ValidationError as exc:
        raise _validation_error(p, text, exc) from None
    seen: dict[str, str] = {}
    for group in GROUPS:
        for i, lab in enumerate(getattr(labels, group)):
            if lab.name in seen:
                line = line_of(text, (group, i, "name"))
                other = seen[lab.name]
                what = "twice in" if other == group else f"in both {other} and"
                raise UserError(
                    f"{group}.{i}.name: label {lab.name!r} is {what} {group}",
                    where=f"{p}:{line}" if line else str(p),
                )
            seen[lab.name] = group
    if labels.needs_info and labels.needs_info in seen:
        raise UserError(
            f"needs_info: {labels.needs_info!r} is also a {seen[labels.needs_info]} label",
            where=f"{p}:{line_of(text, ('needs_info',))}",
        )
    return labels


def load_config(path: str | Path | None) -> Config:
    if path is None:
        return Config()
    p = Path(path)
    text, data = _parse(p)
    try:
        return Config.model_validate(data)
    except ValidationError as exc:
        raise _validation_error(p, text, exc) from None


def find_file(name: str, explicit: str | None, root: Path | None = None) -> Path | None:
    """An explicit path (which must exist), else `name` at the root, then under `.github/`."""
    if explicit:
        p = Path(explicit)
        if not p.is_file():
            raise UserError("file not found", where=str(p))
        return p
    root = root or Path.cwd()
    for candidate in (root / name, root / ".github" / name):
        if candidate.is_file():
            return candidate
    return None


def load_both(
    labels: str | None, config: str | None, root: Path | None = None
) -> tuple[LabelsConfig, Config]:
    labels_path = find_file("labels.toml", labels, root)
    if labels_path is None:
        raise UserError(
            "no labels.toml at the repository root or under .github/ (use --labels, or draft "
            "one from the repository's labels with `issue-assistant init`)"
        )
    return load_labels(labels_path), load_config(find_file("config.toml", config, root))
