"""Find the line of a key in a TOML file, so config errors can say file, line and key."""

from __future__ import annotations

import re

_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(r"^\s*([A-Za-z0-9_\-\.\"' ]+?)\s*=")


def _split_key(text: str) -> list[str]:
    return [part.strip().strip("\"'") for part in text.split(".")]


def key_lines(text: str) -> dict[tuple[str | int, ...], int]:
    """Map each key path (with array-of-table indices) to its 1-based line number."""
    lines: dict[tuple[str | int, ...], int] = {}
    arrays: dict[tuple[str | int, ...], int] = {}
    prefix: tuple[str | int, ...] = ()
    in_multiline: str | None = None
    for lineno, line in enumerate(text.splitlines(), start=1):
        if in_multiline:
            if in_multiline in line:
                in_multiline = None
            continue
        header = _HEADER.match(line)
        if header:
            path: tuple[str | int, ...] = ()
            for part in _split_key(header.group(2)):
                path += (part,)
                if path in arrays and (
                    header.group(1) == "[" or part != _split_key(header.group(2))[-1]
                ):
                    path += (arrays[path],)
            if header.group(1) == "[[":
                arrays[path] = arrays.get(path, -1) + 1
                lines.setdefault(path, lineno)
                path += (arrays[path],)
            prefix = path
            lines[prefix] = lineno
            continue
        key = _KEY.match(line)
        if key:
            path = prefix + tuple(_split_key(key.group(1)))
            lines[path] = lineno
            rest = line[key.end() :]
            for quote in ('"""', "'''"):
                if rest.count(quote) == 1:
                    in_multiline = quote
    return lines


def line_of(text: str, loc: tuple[str | int, ...]) -> int | None:
    """The line of the longest known prefix of `loc`, or None."""
    table = key_lines(text)
    for end in range(len(loc), 0, -1):
        if loc[:end] in table:
            return table[loc[:end]]
    return None
