"""The two configuration files, parsed into typed objects in one place.

`labels.toml` holds the label groups; `config.toml` the engine, project and feature sections.
Unknown keys, wrong types (strict: `"2"` is not a number, `"no"` not a boolean), infinite or NaN
numbers, invalid label names, unknown roles or engines, duplicate labels and labels in two groups
are errors naming file:line and key.
"""

from __future__ import annotations

import difflib
import logging
import re
import tomllib
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    ValidationError,
    field_validator,
    model_validator,
)

from issue_assistant import forms, names
from issue_assistant.errors import UserError
from issue_assistant.labelnames import has_control
from issue_assistant.tomllines import line_of

GROUPS = ("type", "area", "topic", "priority")
_VERSION_LIKE = re.compile(r"(?<![\w.])v?\d+\.\d+(?:\.\d+)*\b")
Group = Literal["type", "area", "topic", "priority"]
Strategy = Literal["zero-shot", "rag", "agent"]
STRATEGIES: tuple[Strategy, ...] = ("zero-shot", "rag", "agent")
# Engine tables that used to be top-level sections: [similar] is now [engines.similar].
MOVED = ("similar", "llama")

log = logging.getLogger(__name__)


ROLES = ("triage", "write", "maintain", "admin")
Role = Literal["triage", "write", "maintain", "admin"]
LABEL_MAX = 50  # GitHub's limit on a label name
# A GitHub login (a bot's ends in `[bot]`): letters, digits, hyphens (underscores on Enterprise).
_LOGIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,38}(?:\[bot\])?")


def _label_name(name: str) -> str:
    """A name GitHub accepts as a label and the API can filter by (no comma)."""
    if not name.strip():
        raise ValueError("a label name cannot be blank")
    if len(name) > LABEL_MAX:
        raise ValueError(f"a label name has at most {LABEL_MAX} characters, not {len(name)}")
    if "," in name:
        raise ValueError("a label name cannot hold a comma")
    if name != name.strip() or has_control(name):  # a line separator or bidi control too
        raise ValueError("a label name cannot start or end with spaces or hold control characters")
    return name


def _login(login: str) -> str:
    if not _LOGIN.fullmatch(login):
        raise ValueError(f"{login!r} is not a GitHub login (like github-actions[bot])")
    return login


def _engine_name(name: str | None) -> str | None:
    """An engine name that `engines.create` knows (built-in, registered or an entry point)."""
    from issue_assistant.engines.registry import available, is_known

    if name and not is_known(name):
        raise ValueError(f"unknown engine {name!r} (available: {', '.join(available())})")
    return name


LabelName = Annotated[str, AfterValidator(_label_name)]
Login = Annotated[str, AfterValidator(_login)]


class Strict(BaseModel):
    # Strict: TOML has types, so a string where a number or boolean belongs is a mistake.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)


def check_glob(glob: str) -> None:
    """A ValueError unless `glob` is a relative POSIX glob (`*`, `**`, `?`, `[...]`)."""
    if not glob or glob.startswith("/") or "\\" in glob or ".." in glob.split("/"):
        raise ValueError(f"bad path glob {glob!r}: use a relative path like 'src/index/**'")
    if glob.count("[") != glob.count("]"):
        raise ValueError(f"bad path glob {glob!r}: unbalanced brackets")
    if any("**" in part and part != "**" for part in glob.split("/")):
        raise ValueError(f"bad path glob {glob!r}: '**' must be a whole path segment")


@cache
def _spec(globs: tuple[str, ...]):  # noqa: ANN202 - a pathspec.GitIgnoreSpec
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines(globs)


def glob_match(glob: str, path: str) -> bool:
    """`path` matches `glob` in the one dialect of every path glob here: `.gitignore`'s (pathspec,
    as the file tools' `glob`): `**` spans folders, `*` stays within one, and a glob without a
    slash (`*.md`) matches at any depth."""
    return _spec((glob,)).match_file(path)


class Ask(Strict):
    """A piece of information a report of this type must contain.

    `requires = "version"` marks the version the reporter runs: the `similar` engine then adds
    the latest release when the named version is older (only when releases are known).
    """

    what: str = Field(min_length=1)
    question: str = Field(min_length=1)
    detect: list[str] = Field(default_factory=list)
    requires: Literal["version"] | None = None
    # The issue form's field that answers it (its label, as the body shows `### Label`), and the
    # text the form prefills in it (an answer left so is empty).
    field: str | None = Field(default=None, min_length=1)
    prefilled: list[str] = Field(default_factory=list)

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
        if self.requires == "version" and _VERSION_LIKE.search(text):
            return True
        return any(re.search(p, text, re.IGNORECASE | re.MULTILINE) for p in self.detect)

    def answered(
        self, title: str, answers: forms.Answers, body: str, more: Sequence[str] = ()
    ) -> bool:
        """Whether the issue gives it: its form field is answered, or the title, what the
        reporter wrote (the form's answers, or the whole body when it is not a form's) or
        `more` (the reporter's replies) says it."""
        blank = frozenset(forms.normal(p) for p in self.prefilled)
        if self.field and answers:
            found = answers.get(self.field)
            if found is not None and not found.empty and forms.normal(found.text) not in blank:
                return True
        said = answers.text(blank) if answers else body
        return self.present_in("\n\n".join([title, said, *more]))


class Label(Strict):
    name: LabelName
    description: str = ""
    propose: bool = True
    # Areas only: globs of the checkout's files that belong to the area ("src/index/**").
    paths: list[str] = Field(default_factory=list)

    @field_validator("paths")
    @classmethod
    def _globs(cls, globs: list[str]) -> list[str]:
        for glob in globs:
            check_glob(glob)
        return globs

    def owns(self, path: str) -> bool:
        """Whether one of `paths` matches the file `path` (POSIX, relative to the checkout)."""
        return bool(self.paths) and _spec(tuple(self.paths)).match_file(path)


class TypeLabel(Label):
    ask: list[Ask] = Field(default_factory=list)
    # The general kind of issue this type is (`learn/type_prior.py`); unset: read from the name.
    kind: Literal["bug", "feature", "question", "docs"] | None = None


class LabelsConfig(Strict):
    needs_info: LabelName | None = None
    max_areas: int = Field(default=3, ge=0)
    max_topics: int = Field(default=3, ge=0)
    type: list[TypeLabel] = Field(default_factory=list)
    area: list[Label] = Field(default_factory=list)
    topic: list[Label] = Field(default_factory=list)
    priority: list[Label] = Field(default_factory=list)

    def group(self, name: Group) -> list[Label]:
        return list(getattr(self, name))

    def group_of(self, label: str) -> Group | None:
        """The group of `label` in any casing (GitHub treats `Bug` and `bug` as one label)."""
        wanted = label.casefold()
        for g in GROUPS:
            if any(lab.name.casefold() == wanted for lab in getattr(self, g)):
                return g  # type: ignore[return-value]
        return None

    def canonical(self, label: str) -> str | None:
        """`label` as labels.toml spells it, matched without regard to case, or None."""
        wanted = label.casefold()
        return next(
            (lab.name for g in GROUPS for lab in getattr(self, g) if lab.name.casefold() == wanted),
            None,
        )

    def known(self, labels: list[str]) -> list[str]:
        """The labels of labels.toml among `labels`, spelled as labels.toml spells them."""
        out: list[str] = []
        for name in labels:
            c = self.canonical(name)
            if c is not None and c not in out:
                out.append(c)
        return out

    def proposable(self, group: Group) -> list[str]:
        return [lab.name for lab in getattr(self, group) if lab.propose]

    def all_names(self) -> set[str]:
        return {lab.name for g in GROUPS for lab in getattr(self, g)}

    def type_label(self, name: str | None) -> TypeLabel | None:
        wanted = name.casefold() if name else None
        return next((t for t in self.type if t.name.casefold() == wanted), None)

    def lacking(self, label_sets: list[list[str]]) -> list[Group]:
        """The groups with a label to propose that some of `label_sets` (issues' labels) have
        no label of, in the order of GROUPS."""
        out: list[Group] = []
        for group in GROUPS:
            if not self.proposable(group):  # type: ignore[arg-type]
                continue
            if any(not any(self.group_of(n) == group for n in names) for names in label_sets):
                out.append(group)  # type: ignore[arg-type]
        return out

    def limit(self, group: Group) -> int:
        return {"type": 1, "priority": 1, "area": self.max_areas, "topic": self.max_topics}[group]


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


class IndexConfig(Strict):
    # "": the default place (`Settings.cache_root`: $RUNNER_TEMP in Actions, else the user's
    # cache folder); a relative path is taken from the current folder.
    cache_dir: str = ""
    embeddings: StrictBool = False


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
        from issue_assistant.engines.registry import options_class

        return options_class(name).model_validate(self.engines.get(name, {}))

    @property
    def similar(self) -> Any:
        """`[engines.similar]`: a `SimilarConfig` (`engines/similar_options.py`)."""
        return self.options("similar")

    def with_engine(self, **changes: Any) -> Config:
        """A copy with `[engine]` keys changed (None values are left as they are)."""
        update = {k: v for k, v in changes.items() if v is not None}
        if not update:
            return self
        return self.model_copy(update={"engine": self.engine.model_copy(update=update)})

    context: ContextConfig = ContextConfig()
    code: CodeConfig = CodeConfig()


def _parse(path: Path) -> tuple[str, dict]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UserError(f"cannot read ({exc.strerror})", where=str(path)) from None
    try:
        return text, tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"not valid TOML: {exc}", where=str(path)) from None


def _fields_at(model: type[BaseModel], loc: tuple[str | int, ...]) -> list[str]:
    """The keys the table at `loc` (inside `model`) may hold: the fields of the model there."""
    current: Any = model
    for part in loc:
        if isinstance(part, int):
            continue  # an item of an array of tables: the same model
        fields = getattr(current, "model_fields", None)
        if not fields or part not in fields:
            return []
        current = _model_in(fields[part].annotation)
        if current is None:
            return []
    return list(getattr(current, "model_fields", {}))


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The model class a field holds (itself, or inside list[...], X | None, Annotated)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()) or ():
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def _message(err: Any, model: type[BaseModel] | None, loc: tuple[str | int, ...]) -> str:
    """pydantic's message for one error, said for a person: "unknown key" with a "did you
    mean", and without pydantic's "Value error, " prefix."""
    if err["type"] == "extra_forbidden":
        known = _fields_at(model, tuple(err["loc"][:-1])) if model is not None else []
        close = difflib.get_close_matches(str(loc[-1]), known, n=1)
        return f"unknown key (did you mean {close[0]!r}?)" if close else "unknown key"
    msg = str(err["msg"])
    for prefix in ("Value error, ", "Assertion failed, "):
        msg = msg.removeprefix(prefix)
    return msg


def _validation_error(
    path: Path,
    text: str,
    exc: ValidationError,
    prefix: tuple[str | int, ...] = (),
    model: type[BaseModel] | None = None,
) -> UserError:
    """The first error as one line naming file:line and key. An unknown key comes first: a
    misspelt `questoin` is the cause of the `question: Field required` beside it."""
    errors = exc.errors()
    err = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    loc = prefix + tuple(err["loc"])
    line = line_of(text, loc)
    key = ".".join(str(p) for p in loc)
    where = f"{path}:{line}" if line else str(path)
    return UserError(f"{key}: {_message(err, model, loc)}", where=where)


def load_labels(path: str | Path) -> LabelsConfig:
    p = Path(path)
    text, data = _parse(p)
    try:
        labels = LabelsConfig.model_validate(data)
    except ValidationError as exc:
        raise _validation_error(p, text, exc, model=LabelsConfig) from None
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
            if lab.paths and group != "area":
                line = line_of(text, (group, i, "paths"))
                raise UserError(
                    f"{group}.{i}.paths: only area labels may name paths",
                    where=f"{p}:{line}" if line else str(p),
                )
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
        data, moved = _migrate(data)
    except ValueError as exc:
        raise UserError(str(exc), where=str(p)) from None
    for name in moved:
        line = line_of(text, (name,))
        log.warning("%s: [%s] is deprecated: move it to [engines.%s]", f"{p}:{line}", name, name)
    try:
        config = Config.model_validate(data)
    except ValidationError as exc:
        raise _validation_error(p, text, exc, model=Config) from None
    _check_engine_tables(p, text, config, moved)
    return config


def _check_engine_tables(p: Path, text: str, config: Config, moved: list[str]) -> None:
    """Each `[engines.NAME]` validated by its engine's options, errors naming file:line and key."""
    from issue_assistant.engines.registry import available, options_class

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
            raise _validation_error(p, text, exc, where, model=cls) from None


#: where the two files are looked for, in this order, as labeler and release-drafter read
#: `.github/`; a file at the repository root comes last, and only when it is ours.
SEARCH_DIRS = tuple(Path(d) for d in names.SEARCH_DIRS)


def _own_keys(name: str) -> set[str]:
    if name == "labels.toml":
        return set(LabelsConfig.model_fields)
    return set(Config.model_fields) | set(MOVED)


def is_ours(path: Path, name: str) -> bool:
    """Whether the file at `path` is an issue-assistant `name`: it is empty, or one of its
    top-level keys is one of ours (a Hugo `config.toml` has `baseURL`, `[params]`, none of
    them). A file that cannot be parsed counts as ours, so its error is reported."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return True
    return not data or bool(set(data) & _own_keys(name))


def find_file(name: str, explicit: str | None, root: Path | None = None) -> Path | None:
    """An explicit path (which must exist), else `name` under `.github/issue-assistant/`, then
    `.github/`, then at the root when it is ours (`is_ours`)."""
    if explicit:
        p = Path(explicit)
        if not p.is_file():
            raise UserError("file not found", where=str(p))
        return p
    root = root or Path.cwd()
    for folder in SEARCH_DIRS:
        candidate = root / folder / name
        if candidate.is_file():
            return candidate
    candidate = root / name
    if candidate.is_file():
        if is_ours(candidate, name):
            return candidate
        log.info("%s: not read, it is another tool's (none of issue-assistant's keys)", candidate)
    return None


def load_both(
    labels: str | None, config: str | None, root: Path | None = None
) -> tuple[LabelsConfig, Config]:
    labels_path = find_file("labels.toml", labels, root)
    if labels_path is None:
        other = (root or Path.cwd()) / "labels.toml"
        note = (
            f" ({other} is another tool's: it has none of issue-assistant's keys)"
            if other.is_file()
            else ""
        )
        raise UserError(
            "no labels.toml in .github/issue-assistant/, .github/ or the repository root"
            f"{note} (use --labels, or draft one from the repository's labels with "
            "`issue-assistant init`)"
        )
    return load_labels(labels_path), load_config(find_file("config.toml", config, root))


# A description that is a placeholder still to be written ("TODO: what it means", "TBD").
_PLACEHOLDER = re.compile(r"\s*(?:TODO|TBD|FIXME|XXX)\b", re.IGNORECASE)


def unwritten(text: str) -> bool:
    """Whether a description is empty or still a placeholder (TODO, TBD, FIXME)."""
    return not text.strip() or bool(_PLACEHOLDER.match(text))


def weak_spots(labels: LabelsConfig, config: Config) -> tuple[list[str], list[str]]:
    """What will make the engines answer worse, one line each: in labels.toml, a proposable
    label (or a type) without a description; in config.toml, no project description."""
    in_labels = []
    for group in GROUPS:
        for lab in labels.group(group):  # type: ignore[arg-type]
            if not lab.propose or not unwritten(lab.description):
                continue
            what = "is empty" if not lab.description.strip() else "is still a placeholder"
            if group == "type":
                in_labels.append(
                    f"the type `{lab.name}`'s description {what}: the LLM engines tell the "
                    "types apart by it"
                )
            else:
                in_labels.append(
                    f"the {group} label `{lab.name}`'s description {what}: the LLM engines read "
                    "it to decide when the label fits"
                )
    in_config = []
    if unwritten(config.project.description):
        in_config.append(
            "[project] description is empty or a placeholder: the LLM engines read it to know "
            "what the project is"
        )
    return in_labels, in_config
