"""The functions (and classes) of a source file with their line spans, to name what a line is in.

Python by indentation (methods named `Class.method`); other files by the lines that start a
definition (`def`, `function`, `func`, `fn`, ...), each running to the next one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_DEF = re.compile(
    r"^\s*(?:export\s+)?(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?"
    r"(?:def|class|function|func|fn|interface|struct|type)\s+(?:\([^)]*\)\s*)?([A-Za-z_]\w*)"
)


@dataclass(frozen=True)
class Span:
    name: str  # qualified: `Dataset.map`
    first: int  # 1-based, the decorator or the `def` line
    last: int


def spans(text: str, path: str = "") -> list[Span]:
    """Every function and class of `text`, outermost first (a method after its class)."""
    if path.endswith((".py", ".pyx")) or not path:
        return _python(text)
    return _generic(text)


_PY_DEF = re.compile(r"^(\s*)(?:async\s+)?(def|class)\s+([A-Za-z_]\w*)")
TRIPLE = ('"' * 3, "'" * 3)


def _string_after(line: str, open_quote: str | None) -> str | None:
    """The triple quote still open at the end of `line`, given the one open at its start
    (a scan of its string literals and comment)."""
    i, n = 0, len(line)
    while i < n:
        if open_quote is not None:
            end = line.find(open_quote, i)
            while end > 0 and (len(line[:end]) - len(line[:end].rstrip("\\"))) % 2 == 1:
                end = line.find(open_quote, end + 1)
            if end < 0:
                return open_quote
            i, open_quote = end + 3, None
            continue
        c = line[i]
        if c == "#":
            return None
        if c in "'\"":
            if line.startswith(c * 3, i):
                open_quote, i = c * 3, i + 3
                continue
            i += 1
            while i < n and line[i] != c:
                i += 2 if line[i] == "\\" else 1
        i += 1
    return open_quote


def _python(text: str) -> list[Span]:
    """Python definitions by indentation (fast; `ast` is slow on a long file): a
    `def` or `class` runs until the next code line indented as much or less; lines inside
    triple-quoted strings are not code."""
    out: list[Span] = []
    open_: list[tuple[int, str, int, int]] = []  # indent, name, first, index in out
    last_code = 0
    decorator: int | None = None
    decorator_indent = 0
    in_string: str | None = None
    for n, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if in_string is not None:
            in_string = _string_after(line, in_string)
            last_code = n
            continue
        if not stripped or stripped.startswith("#"):
            continue
        indent = len(line) - len(line.lstrip())
        while open_ and indent <= open_[-1][0] and not stripped.startswith((")", "]", "}")):
            _, name, first, at = open_.pop()
            out[at] = Span(name, first, max(last_code, first))
        m = _PY_DEF.match(line)
        if stripped.startswith("@"):
            if decorator is None:
                decorator, decorator_indent = n, indent
        elif m:
            prefix = ".".join(o[1].rsplit(".", 1)[-1] for o in open_[-1:]) if open_ else ""
            name = f"{open_[-1][1]}.{m[3]}" if open_ and prefix else m[3]
            first = decorator or n
            open_.append((indent, name, first, len(out)))
            out.append(Span(name, first, n))
            decorator = None
        elif indent <= decorator_indent and not stripped.startswith((")", "]", "}")):
            decorator = None  # (a decorator's arguments may run over several lines)
        if TRIPLE[0] in line or TRIPLE[1] in line:
            in_string = _string_after(line, None)
        last_code = n
    for _, name, first, at in open_:
        out[at] = Span(name, first, max(last_code, first))
    return out


def _generic(text: str) -> list[Span]:
    starts = [
        (n, m[1]) for n, line in enumerate(text.splitlines(), start=1) if (m := _DEF.match(line))
    ]
    total = text.count("\n") + 1
    return [
        Span(name, n, (starts[i + 1][0] - 1) if i + 1 < len(starts) else total)
        for i, (n, name) in enumerate(starts)
    ]


def enclosing(found: list[Span], line: int) -> str | None:
    """The innermost function or class holding `line` (None at module level)."""
    best: Span | None = None
    for s in found:
        if s.first <= line <= s.last and (best is None or s.first >= best.first):
            best = s
    return best.name if best else None


def touched(found: list[Span], ranges: list[tuple[int, int]]) -> list[str]:
    """The innermost functions or classes the line ranges touch, in order, without repeats."""
    out: list[str] = []
    for first, last in ranges:
        inner = [s for s in found if s.first <= last and first <= s.last]
        # innermost: no other touched span lies inside it
        for s in inner:
            if any(o is not s and s.first <= o.first and o.last <= s.last for o in inner):
                continue
            if s.name not in out:
                out.append(s.name)
    return out


def qualify(found: list[Span], name: str | None, line: int | None) -> str | None:
    """The qualified function a stack frame means: the one holding `line` when its name is
    `name` (or no name is given), else the definition named `name` nearest to `line` (the
    reporter may run another version), else the one holding `line`."""
    held = enclosing(found, line) if line is not None else None
    if name is None or (held is not None and held.rsplit(".", 1)[-1] == name):
        return held
    named = [s for s in found if s.name.rsplit(".", 1)[-1] == name]
    if named:
        return min(named, key=lambda s: abs(s.first - (line or 0))).name
    return held
