"""Likely files: what in an issue points at the files it concerns, each signal alone, combined.

Signals (each a list of `Hint`s, best first):
- `frame`: files named in a stack frame (`File "…/datasets/load.py", line 12, in f`), the
  innermost first: the frame where it failed is near-certain to be relevant.
- `path`: files named by path (`src/x/y.py`), by module (`datasets.arrow_dataset`) or by a file
  name found once in the checkout (`arrow_dataset.py`).
- `error`: files that hold the text of an error message quoted in the issue (the literal parts
  of `ValueError: Couldn't find file at …`), or define the exception class it names.
- `words`: BM25 over the files' path words, identifiers and docstrings (`CodeIndex.search`),
  the title's words counting twice.
- `history`: the files changed by the fixes of similar earlier issues (`likely.fix_history`).
- `prior`: the files most often changed by earlier fixes.

`likely.rank` combines them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from issue_assistant.likely.code import CodeIndex, words

SIGNALS = ("frame", "path", "error", "words", "history", "prior")
# The comment's wording of each signal (also LikelyFile.reason, as before for the first ones).
REASONS = {
    "frame": "stack frame",
    "path": "path",
    "error": "error message",
    "words": "words",
    "history": "similar fixes",
    "prior": "often fixed",
}
CODE_SUFFIXES = (".py", ".pyx", ".js", ".ts", ".go", ".rs", ".java", ".rb", ".c", ".cc", ".cpp")

_TRACE_FRAME = re.compile(r'File "([^"\n]+)", line (\d+)(?:, in ([\w<>.]+))?')
_MODULE = re.compile(r"(?<![\w./-])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*){1,6})(?![\w/-])")
_FILE_NAME = re.compile(r"(?<![\w/.-])([\w-]{3,}\.(?:py|pyx|js|ts|go|rs|java|rb|toml|cfg))\b")
# The message is the rest of the line, its trailing space taken off by the reader
# (`message_fragments`): `(.+?)\s*$` would try every end of a line full of spaces.
_ERROR_LINE = re.compile(
    r"^[^\S\n]*(?:[\w.]+\.)?([A-Z]\w*(?:Error|Exception|Warning|Exit))\s*:\s*(.+)$", re.MULTILINE
)
# A message longer than this is cut before it is split into its literal parts (`_VARIABLE`
# reads a long run of characters once for each place it could start).
MESSAGE_CHARS = 1000
# IPython and Jupyter tracebacks: `…/datasets/load.py in load_dataset(path, …)`, then the
# frame's lines with `--> 1483` at the one running.
_IPYTHON_FRAME = re.compile(r"^[ \t]*((?:[~\w.-]*/)*[\w.-]+\.pyx?) in ([\w<>]+)\(", re.MULTILINE)
_IPYTHON_LINE = re.compile(r"^-+>\s*(\d+)", re.MULTILINE)
# Other traces: `at f (src/x.js:10:5)`, `src/x.go:123`, `src/x.rs:1:2`, .NET's
# `in C:\src\X.cs:line 42` (not Python's).
_LINE_FRAME = re.compile(
    r"(?<![\w/\\.-])((?:[A-Za-z]:)?[/\\]?(?:[\w.-]+[/\\])*[\w.-]+\.(?!py\b)[A-Za-z][A-Za-z0-9]{0,5})"
    r":(?:line )?(\d+)"
)
# What varies in a message: quoted values (not an apostrophe inside a word), paths and URLs,
# numbers, bracketed reprs.
_VARIABLE = re.compile(
    r"(?<!\w)'[^'\n]*'(?!\w)|\"[^\"\n]*\"|`[^`\n]*`|\S*[/\\]\S*|\b\d[\w.]*|\([^)\n]*\)"
    r"|\[[^\]\n]*\]|\{[^}\n]*\}"
)


@dataclass(frozen=True)
class Hint:
    """One signal's word on one file: its score (higher is better), a line, and why."""

    path: str
    score: float
    line: int | None = None
    detail: str = ""
    function: str | None = None


def frames(code: CodeIndex, text: str) -> list[Hint]:
    """Files in the issue's stack frames, innermost first: Python's and IPython's tracebacks end
    with the innermost frame (read backwards); `at f (x.js:10:5)`, `x.go:123` traces start with
    it (read in order, after those). With each frame's line and function."""
    found: list[tuple[int, str, int | None, str | None]] = []  # position, path, line, function
    for m in _TRACE_FRAME.finditer(text):
        found.append((m.start(), m[1], int(m[2]), m[3]))
    ipython = list(_IPYTHON_FRAME.finditer(text))
    for i, m in enumerate(ipython):
        end = ipython[i + 1].start() if i + 1 < len(ipython) else len(text)
        line = _IPYTHON_LINE.search(text, m.end(), end)
        found.append((m.start(), m[1], int(line[1]) if line else None, m[2]))
    ordered = [(named, line, func) for _, named, line, func in sorted(found, reverse=True)]
    ordered += [(m[1].replace("\\", "/"), int(m[2]), None) for m in _LINE_FRAME.finditer(text)]
    out: dict[str, Hint] = {}
    for named, line, func in ordered:
        rel = code.resolve(named)
        if rel and rel not in out:
            func = func if func and func != "<module>" else None
            where = (f"line {line}" if line else "") + (f", in `{func}`" if func else "")
            out[rel] = Hint(rel, 0.85 ** len(out), line, where.lstrip(", "), func)
    return list(out.values())


def paths(code: CodeIndex, text: str) -> list[Hint]:
    """Files named by path, by dotted module, or by a file name the checkout has once."""
    out: dict[str, Hint] = {}

    def add(rel: str | None, score: float, detail: str) -> None:
        if rel and rel not in out:
            out[rel] = Hint(rel, score, None, detail)

    for m in re.finditer(r"(?<![\w/.-])((?:[\w.-]+/)+[\w.-]+\.[A-Za-z][A-Za-z0-9]{0,5})\b", text):
        if _TRACE_FRAME.match(text, max(m.start() - 6, 0)) is None:
            add(code.resolve(m[1]), 1.0, f"`{m[1]}` named")
    packages = code.packages()
    for m in _MODULE.finditer(text):
        parts = m[1].split(".")
        if parts[0] not in packages:
            continue
        for n in range(len(parts), 1, -1):
            base = "/".join(parts[:n])
            rel = code.resolve(base + ".py") or code.resolve(base + "/__init__.py")
            if rel:
                add(rel, 0.8, f"module `{'.'.join(parts[:n])}`")
                break
    names = code.by_name()
    for m in _FILE_NAME.finditer(text):
        hits = names.get(m[1], [])
        if len(hits) == 1:
            add(hits[0], 0.6, f"`{m[1]}` named")
    return list(out.values())


def message_fragments(text: str, min_chars: int = 12) -> list[tuple[str, str]]:
    """(exception, fragment): the literal parts of each error message in `text`."""
    out: list[tuple[str, str]] = []
    for m in _ERROR_LINE.finditer(text):
        message = m[2].rstrip()
        if len(message) > 2 and message[0] == message[-1] and message[0] in "'\"":
            message = message[1:-1]  # KeyError('…') shows the whole message as a repr
        for piece in _VARIABLE.split(message[:MESSAGE_CHARS]):
            piece = piece.rstrip(" [({").strip(" .,:;!-'\"")  # and a list cut short
            if len(piece) >= min_chars and " " in piece and (m[1], piece) not in out:
                out.append((m[1], piece))
    return out[:12]


def _holding(code: CodeIndex, needle: str, most: int) -> list[tuple[str, int]]:
    """(path, offset) of the code files whose text holds `needle`, or [] when more than `most`
    do (too common to point anywhere). The index finds the files with all of its words among
    their identifiers (string literals' words included), and only those are read."""
    terms = [w for w in dict.fromkeys(words(needle)) if len(w) > 2 and not w.isdigit()]
    if not terms:
        return []
    query = code.index.parse_query(" ".join(f"+{t}" for t in terms[:12]), ["idents"])
    out: list[tuple[str, int]] = []
    for _, address in code._searcher.search(query, limit=200).hits:
        path = code._searcher.doc(address).to_dict()["path"][0]
        if not path.endswith(CODE_SUFFIXES):
            continue
        at = code.files[path].find(needle)
        if at >= 0:
            out.append((path, at))
            if len(out) > most:
                return []
    return out


def _candidates(fragment: str, min_chars: int) -> list[str]:
    """The fragment, then its first and its second half (a value the message printed without
    quotes, `No entry named foo in the store`, leaves one of them literal)."""
    words = fragment.split()
    out = [fragment]
    if len(words) >= 4:
        half = len(words) // 2
        out += [p for p in (" ".join(words[:half]), " ".join(words[half:])) if len(p) >= min_chars]
    return out


def errors(code: CodeIndex, text: str, most: int = 8, min_chars: int = 12) -> list[Hint]:
    """Files holding the literal text of an error message from the issue (rarer is better),
    then files defining the exception class named."""
    scores: dict[str, float] = {}
    detail: dict[str, str] = {}
    line: dict[str, int] = {}

    def add(path: str, offset: int, score: float, why: str) -> None:
        scores[path] = scores.get(path, 0.0) + score
        detail.setdefault(path, why)
        line.setdefault(path, code.files[path].count("\n", 0, offset) + 1)

    for _exc, fragment in message_fragments(text, min_chars):
        for candidate in _candidates(fragment, min_chars):
            hits = _holding(code, candidate, most)
            for path, offset in hits:
                add(path, offset, len(candidate) / len(hits), f'has the message "{candidate[:60]}"')
            if hits:
                break
    for exc in {m[1] for m in _ERROR_LINE.finditer(text)}:
        for path, offset in _holding(code, f"class {exc}(", 2):
            add(path, offset, 6.0, f"defines `{exc}`")
    ranked = sorted(scores, key=lambda p: -scores[p])
    return [Hint(p, scores[p], line.get(p), detail[p]) for p in ranked]


def word_hints(
    code: CodeIndex, title: str, body: str = "", limit: int = 30, project: str = ""
) -> list[Hint]:
    """BM25 over the files' path words, identifiers and docs for the issue's words (the title's
    twice), with the query words each of the first files holds."""
    ignore = frozenset(words(project))
    hits = code.search(body, limit=limit, ignore=ignore, title=title)
    terms = code.query_words(f"{title}\n{body}", ignore=ignore)
    out = []
    for i, h in enumerate(hits):
        shared = code.shared_terms(h.path, terms)[:3] if i < 5 else []
        detail = "matches " + ", ".join(f"`{t}`" for t in shared) if shared else ""
        out.append(Hint(h.path, h.score, h.line, detail))
    return out
