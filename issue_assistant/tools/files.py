"""Tools over the checkout, read-only and confined to it: read a file, grep, list files.

`Checkout.resolve` accepts only relative paths without `..`, outside ignored folders, whose real
path (symlinks resolved) stays inside the root. Files over `MAX_FILE_BYTES` and binaries are not
read; listings, matches and read lines are capped; grep's regex runs with a time limit.
"""

from __future__ import annotations

import re
import time
from typing import Any

import regex
from pydantic import Field

from issue_assistant.render import render
from issue_assistant.tools.base import Toolbox, ToolFailure, ToolInput, tool
from issue_assistant.tools.checkout import Checkout

MAX_READ_LINES = 400
MAX_READ_CHARS = 24_000
MAX_LINE_CHARS = 500
MAX_LISTED = 300
MAX_MATCHES = 50
MAX_SCANNED_BYTES = 40_000_000
GREP_SECONDS = 5.0
LINE_TIMEOUT = 0.2
# The `regex` module unrolls a counted repetition when it compiles (`a{1000000000}` takes
# minutes and gigabytes before the match's timeout applies): the unrolled size is bounded first.
MAX_PATTERN_WEIGHT = 100_000
_QUANTIFIER = re.compile(r"\{(\d*)(?:,(\d*))?\}")


def pattern_weight(pattern: str) -> int:
    """About how many nodes `regex` unrolls `pattern` into: each item counts 1, a group the sum
    of its items, and `{m}`/`{m,n}` multiplies what it repeats by m (nesting multiplies).
    Escapes (also `\\p{..}`) and character classes count 1; an overestimate is fine."""
    stack: list[int] = [0]
    last = 0  # the weight of the item a quantifier would repeat
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "\\":
            i += 2
            if i < n and pattern[i] == "{":  # \p{L}, \N{NAME}, \x{263a}
                close = pattern.find("}", i)
                i = n if close == -1 else close + 1
            last = 1
            stack[-1] += 1
            continue
        if ch == "[":
            j = i + 1
            if j < n and pattern[j] == "^":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            while j < n and pattern[j] != "]":
                j += 2 if pattern[j] == "\\" else 1
            i, last = j + 1, 1
            stack[-1] += 1
            continue
        if ch == "(":
            stack.append(0)
            i += 1
            continue
        if ch == ")":
            inner = stack.pop() if len(stack) > 1 else 0
            last = max(inner, 1)
            stack[-1] += last
            i += 1
            continue
        if ch == "{":
            m = _QUANTIFIER.match(pattern, i)
            if m:
                low = int(m.group(1) or 0) if len(m.group(1) or "") < 12 else 10**12
                times = max(low, 1)
                stack[-1] += last * (times - 1)
                last *= times
                i = m.end()
                continue
        if ch != "|":
            last = 1
            stack[-1] += 1
        i += 1
    return sum(stack)


def compile_pattern(pattern: str) -> Any:
    """`pattern` compiled, or a ToolFailure when it is not valid or would unroll too far."""
    if pattern_weight(pattern) > MAX_PATTERN_WEIGHT:
        raise ToolFailure(
            "the pattern repeats too much to search with (a count like {1000000}); "
            "use a smaller count or `+`"
        )
    try:
        return regex.compile(pattern)
    except (regex.error, OverflowError, RecursionError, MemoryError, ValueError) as exc:
        raise ToolFailure(f"not a valid regular expression: {exc}") from None


def _line(text: str) -> str:
    text = text.rstrip("\r\n")
    return text if len(text) <= MAX_LINE_CHARS else text[: MAX_LINE_CHARS - 1] + "…"


class ReadFileInput(ToolInput):
    path: str = Field(max_length=1000, description="file path relative to the repository root")
    start: int = Field(default=1, ge=1, description="first line (1-based)")
    end: int | None = Field(
        default=None, ge=1, description=f"last line, inclusive (at most {MAX_READ_LINES} lines)"
    )


class GrepInput(ToolInput):
    pattern: str = Field(
        min_length=1, max_length=300, description="regular expression ((?i) for any case)"
    )
    glob: str | None = Field(
        default=None, max_length=200, description="only files matching, e.g. '*.py' or 'src/**'"
    )


class ListFilesInput(ToolInput):
    glob: str | None = Field(
        default=None, max_length=200, description="only files matching, e.g. '*.py' or 'docs/**'"
    )


@tool("read_file", ReadFileInput, needs_checkout=True)
def read_file(box: Toolbox, args: ReadFileInput) -> str:
    """Read lines of a file in the repository's checkout (path relative to its root), with line
    numbers; at most 400 lines at a time."""
    checkout = _checkout(box)
    rel, real = checkout.resolve(args.path)
    if real.is_dir():
        raise ToolFailure(f"{rel}: a folder; use list_files with glob '{rel}/**'")
    lines = checkout.text(real, rel).splitlines()
    if args.end is not None and args.end < args.start:
        raise ToolFailure(f"end ({args.end}) is before start ({args.start})")
    if lines and args.start > len(lines):
        raise ToolFailure(f"{rel} has only {len(lines)} lines")
    last = min(args.end or len(lines), args.start + MAX_READ_LINES - 1, len(lines))
    shown: list[tuple[int, str]] = []
    size = 0
    for number in range(args.start, last + 1):
        text = _line(lines[number - 1])
        size += len(text) + 8
        if size > MAX_READ_CHARS and shown:
            break
        shown.append((number, text))
    return render("tools/read_file.txt.j2", path=rel, lines=shown, total=len(lines))


@tool("grep", GrepInput, needs_checkout=True)
def grep(box: Toolbox, args: GrepInput) -> str:
    """Search the checkout's text files for a regular expression (Python syntax), optionally only
    in files matching a glob. Returns path:line: text, at most 50 matches."""
    checkout = _checkout(box)
    compiled = compile_pattern(args.pattern)
    deadline = time.monotonic() + GREP_SECONDS
    matches: list[tuple[str, int, str]] = []
    files: set[str] = set()
    scanned = 0
    stopped = None
    for rel in checkout.files(args.glob):
        try:
            text = checkout.text(checkout.root / rel, rel)
        except ToolFailure:
            continue
        scanned += len(text)
        for number, line in enumerate(text.splitlines(), 1):
            left = deadline - time.monotonic()
            if left <= 0:
                stopped = "time"
                break
            try:
                found = compiled.search(line[:2000], timeout=min(LINE_TIMEOUT, left))
            except (TimeoutError, MemoryError, RecursionError):
                raise ToolFailure(
                    "the pattern takes too long on this text (nested repetition?); simplify it"
                ) from None
            if found:
                matches.append((rel, number, _line(line.strip())))
                files.add(rel)
                if len(matches) >= MAX_MATCHES:
                    stopped = "matches"
                    break
        if stopped or scanned > MAX_SCANNED_BYTES:
            stopped = stopped or "size"
            break
    return render("tools/grep.txt.j2", matches=matches, files=len(files), stopped=stopped)


@tool("list_files", ListFilesInput, needs_checkout=True)
def list_files(box: Toolbox, args: ListFilesInput) -> str:
    """List the checkout's files (ignored, vendored and build folders left out), optionally only
    those matching a glob ('*.py' matches at any depth; 'src/*.py' only directly in src)."""
    checkout = _checkout(box)
    paths: list[str] = []
    more = 0
    for rel in checkout.files(args.glob):
        if len(paths) < MAX_LISTED:
            paths.append(rel)
        else:
            more += 1
    return render("tools/list_files.txt.j2", paths=paths, more=more, glob=args.glob)


def _checkout(box: Toolbox) -> Checkout:
    if box.checkout is None:
        raise ToolFailure("no checkout of the repository is available")
    return box.checkout
