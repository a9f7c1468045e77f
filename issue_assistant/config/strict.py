"""The strict model every table of the two files is, and reading a TOML file into one: errors
name file:line and key, an unknown key comes with a "did you mean"."""

from __future__ import annotations

import difflib
import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from issue_assistant.errors import UserError
from issue_assistant.tomllines import line_of


class Strict(BaseModel):
    # Strict: TOML has types, so a string where a number or boolean belongs is a mistake.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)


def read_toml(path: Path) -> tuple[str, dict]:
    """The text of the file at `path` and its data; unreadable or not TOML: an error naming it."""
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


def validation_error(
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
