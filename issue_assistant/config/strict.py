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
    except UnicodeDecodeError as exc:
        line = exc.object[: exc.start].count(b"\n") + 1
        raise UserError(
            f"not UTF-8 text, as TOML must be ({exc.reason})", where=f"{path}:{line}"
        ) from None
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


# The errors one message names beside the first, at most (a file that is not this tool's would
# otherwise fill the terminal).
MORE_ERRORS = 4


def validation_error(
    path: Path,
    text: str,
    exc: ValidationError,
    prefix: tuple[str | int, ...] = (),
    model: type[BaseModel] | None = None,
) -> UserError:
    """Every error in one line: the first names file:line and key, the others their line and
    key, so one run shows what to fix. An unknown key comes first, and the "Field required" of
    its table is left out: a misspelt `questoin` is the cause of the `question` missing beside
    it."""
    errors = exc.errors()
    misspelt = {tuple(e["loc"][:-1]) for e in errors if e["type"] == "extra_forbidden"}
    kept = [e for e in errors if e["type"] != "missing" or tuple(e["loc"][:-1]) not in misspelt]
    said: list[tuple[int | None, str]] = []
    for err in sorted(kept or errors, key=lambda e: e["type"] != "extra_forbidden"):
        loc = prefix + tuple(err["loc"])
        key = ".".join(str(p) for p in loc)
        one = (line_of(text, loc), f"{key}: {_message(err, model, loc)}")
        if one not in said:
            said.append(one)
    said[1:] = sorted(said[1:], key=lambda one: one[0] or 0)  # the others in the file's order
    (line, first), rest = said[0], said[1:]
    where = f"{path}:{line}" if line else str(path)
    others = [f"line {n}: {what}" if n else what for n, what in rest[:MORE_ERRORS]]
    if len(rest) > MORE_ERRORS:
        others.append(f"{len(rest) - MORE_ERRORS} more")
    return UserError("; ".join([first, *others]), where=where)
