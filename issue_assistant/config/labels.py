"""`labels.toml`: the label groups (type, area, topic, priority), the questions a type asks, and
the path globs of the areas."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, ValidationError, field_validator

from issue_assistant import forms
from issue_assistant.config.strict import Strict, read_toml, validation_error
from issue_assistant.errors import UserError
from issue_assistant.labelnames import has_control, key
from issue_assistant.tomllines import line_of

GROUPS = ("type", "area", "topic", "priority")
_VERSION_LIKE = re.compile(r"(?<![\w.])v?\d+\.\d+(?:\.\d+)*\b")
Group = Literal["type", "area", "topic", "priority"]
LABEL_MAX = 50  # GitHub's limit on a label name


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


LabelName = Annotated[str, AfterValidator(_label_name)]


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


def load_labels(path: str | Path) -> LabelsConfig:
    p = Path(path)
    text, data = read_toml(p)
    try:
        labels = LabelsConfig.model_validate(data)
    except ValidationError as exc:
        raise validation_error(p, text, exc, model=LabelsConfig) from None
    # GitHub tells labels apart without regard to case: `Bug` and `bug` are one label
    seen: dict[str, tuple[str, str]] = {}  # `key` of a name -> (group, name as written)
    for group in GROUPS:
        for i, lab in enumerate(getattr(labels, group)):
            if key(lab.name) in seen:
                line = line_of(text, (group, i, "name"))
                other, written = seen[key(lab.name)]
                what = "twice in" if other == group else f"in both {other} and"
                case = "" if written == lab.name else f" (as {written!r}: GitHub ignores case)"
                raise UserError(
                    f"{group}.{i}.name: label {lab.name!r} is {what} {group}{case}",
                    where=f"{p}:{line}" if line else str(p),
                )
            seen[key(lab.name)] = (group, lab.name)
            if lab.paths and group != "area":
                line = line_of(text, (group, i, "paths"))
                raise UserError(
                    f"{group}.{i}.paths: only area labels may name paths",
                    where=f"{p}:{line}" if line else str(p),
                )
    if labels.needs_info and key(labels.needs_info) in seen:
        group = seen[key(labels.needs_info)][0]
        raise UserError(
            f"needs_info: {labels.needs_info!r} is also {'an' if group == 'area' else 'a'} "
            f"{group} label",
            where=f"{p}:{line_of(text, ('needs_info',))}",
        )
    return labels
