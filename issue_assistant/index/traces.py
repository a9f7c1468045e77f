"""What a pasted trace says: its stack frames, its error lines and which of them wrap another.

- `frames`: the stack frames as `file:function` (a .NET frame as `Type:Method`), innermost last
  whatever the language: Python's tracebacks (and IPython's and Colab's) end with the frame
  nearest the error, JavaScript's, Java's and .NET's `at` lines start with it.
  `frame_overlap` compares two stacks by their innermost frames.
- `message_key`: an error line's message as two reports are compared on it, with numbers, quoted
  values other than names, and paths taken out, so `Requested slice [:10] incompatible with 20
  examples` and the same error at other sizes match, and `module 'pyarrow.lib' has no attribute
  'ListViewType'` and the same words about `'PIL.Image'` do not.
- `raised_from`: the errors raised from another in a chained Python traceback (`Wrappers`), the
  same whatever went wrong; the cause is the error before them.
- `as_written`: an error line as a comment quotes it.

Every pattern here reads issue text, which anyone can write: each runs in time linear in the
text's length (`bench/section_hostile_text.py`, `tests/test_hostile_text.py`).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from issue_assistant.index.query import _ERROR_LINE, _EXCEPTION, _URL

# Frames: `File "x.py", line 3, in f`; IPython `File ~/x.py:3, in f(...)`; Colab
# `[/x.py](url) in f(...)`; JavaScript `at f (x.js:1:2)`; Java `at a.B.f(B.java:3)`; .NET
# `at N.Type.Method(String s) in /src/Type.cs:line 42` at a line's start (the file part only
# with symbols).
_PYTHON = re.compile(r'File "([^"\n]+)", line \d+, in ([\w<>.]+)')
_IPYTHON = re.compile(r"File (\S+?\.py):\d+, in ([\w<>.]+)")
_COLAB = re.compile(r"\[?(/[^\]\s()]+\.py)\]?(?:\([^)\s]*\))? in ([\w<>.]+)\(")
_JAVASCRIPT = re.compile(r"\bat (?:async )?([\w$.<>]+) \(([^()\s]+?\.[cm]?[jt]sx?):\d+(?::\d+)?\)")
_JAVA = re.compile(r"\bat ([\w$.]+)\.([\w$<>]+)\((\w+\.(?:java|kt|scala)):\d+\)")
_DOTNET = re.compile(
    r"^[^\S\n]*at ((?:[\w<][\w`<>+$]*\.)*[\w<][\w`<>+$]*)\.([\w<>`$|]+)"
    r"(?:\[[^\]\n]{0,200}\])?\((?![\w.]+\.(?:java|kt|scala):\d+\))[^()\n]{0,500}\)",
    re.MULTILINE,
)
# A .NET async method runs in a state machine: `<ReadAsync>d__5.MoveNext` is `ReadAsync`.
_STATE_MACHINE = re.compile(r"<(\w+)>d__\d+")
_FRAME_RUN = re.compile(r"[^\]\s()]+")  # the characters of `_COLAB`'s path
INNERMOST = 4  # the frames nearest the error, where two reports of one crash agree


def _dotnet(m: re.Match[str]) -> tuple[str, str]:
    """A .NET frame's type and method, an async method's state machine read as the method."""
    types, func = m[1].split("."), m[2]
    machine = _STATE_MACHINE.fullmatch(types[-1])
    if machine and func == "MoveNext" and len(types) > 1:
        types, func = types[:-1], machine.group(1)
    return types[-1].split("`")[0], func


def _colab_frames(text: str) -> Iterator[re.Match[str]]:
    """`_COLAB`'s matches as `finditer` finds them, each run of a path's characters read once: a
    match starts only at a run's first `/` (or the `[` before it), for a later start in the run
    could end its path only where that one could."""
    end = 0
    for run in _FRAME_RUN.finditer(text):
        slash = text.find("/", run.start(), run.end())
        if run.start() < end or slash < 0:
            continue
        m = _COLAB.match(text, slash - 1 if text[slash - 1 : slash] == "[" else slash)
        if m:
            end = m.end()
            yield m


@dataclass(frozen=True)
class _Trace:
    """One language's frames: how they are found, read as (file, function), and whether its
    traces list the frame nearest the error first."""

    find: Callable[[str], Iterator[re.Match[str]]]
    read: Callable[[re.Match[str]], tuple[str, str]]
    innermost_first: bool = False


_TRACES = (
    _Trace(_PYTHON.finditer, lambda m: (m[1], m[2])),
    _Trace(_IPYTHON.finditer, lambda m: (m[1], m[2])),
    _Trace(_colab_frames, lambda m: (m[1], m[2])),
    _Trace(_JAVASCRIPT.finditer, lambda m: (m[2], m[1]), innermost_first=True),
    _Trace(_JAVA.finditer, lambda m: (m[3], m[2]), innermost_first=True),
    _Trace(_DOTNET.finditer, _dotnet, innermost_first=True),
)


def frames(text: str) -> tuple[str, ...]:
    """The stack frames in `text` as `file:function` (a .NET frame as `Type:Method`), innermost
    last: in the order they appear, each run of a trace listing the innermost first (`at`
    lines) reversed; repeats kept once, at their first place."""
    found: list[tuple[int, bool, str]] = []
    for trace in _TRACES:
        for m in trace.find(text):
            file, func = trace.read(m)
            name = re.split(r"[/\\]", file)[-1]
            found.append((m.start(), trace.innermost_first, f"{name}:{func.rsplit('.', 1)[-1]}"))
    found.sort()
    ordered: list[str] = []
    run: list[str] = []
    for _, innermost_first, frame in found:
        if innermost_first:
            run.append(frame)
            continue
        ordered += reversed(run)
        run = []
        ordered.append(frame)
    ordered += reversed(run)
    return tuple(dict.fromkeys(ordered))


def frame_overlap(mine: tuple[str, ...], theirs: tuple[str, ...]) -> float:
    """How much of `mine`'s innermost stack (its last `INNERMOST` frames) `theirs` holds, when
    the two share at least two frames (one frame, `main` or `load`, says nothing)."""
    other = set(theirs)
    if len(set(mine) & other) < 2:
        return 0.0
    inner = mine[-INNERMOST:]
    return sum(1 for f in inner if f in other) / len(inner)


# The exception's name before its message: `ValueError:`, or any class a module names
# (`datasets.utils.info_utils.ExpectedMoreSplits:`), which is not part of the message.
_EXCEPTION_HEAD = re.compile(
    r"^(?:[\w.]*(?:Error|Exception|Warning|Invalid)\s*[:(]|(?:[a-z_]\w*\.)+[A-Z]\w*\s*:)\s*"
)
_QUOTED = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"|`[^`\n]*`")
# A quoted name kept in an error message: a module, class, attribute or key (`pyarrow.lib`,
# `ListViewType`), not a file (`train.json`) nor a value with spaces, slashes or digits alone.
_NAME = re.compile(r"[A-Za-z_][\w.]{0,63}")
_FILE_NAME = re.compile(
    r"\.(?:json|jsonl|csv|tsv|txt|parquet|arrow|py|ipynb|ya?ml|toml|md|zip|gz|tar|bz2|xz|zst"
    r"|png|jpe?g|gif|webp|wav|mp3|flac|mp4|h5|hdf5|pt|pth|bin|safetensors|npy|npz|pkl|lock)$",
    re.IGNORECASE,
)
# A path starts where a run of its characters starts (or at a drive, `C:`): a start inside a run
# would fail where the run's start failed, and trying each one reads a long run again and again.
_PATHLIKE = re.compile(r"(?:(?<![~.\w-])|(?=[A-Za-z]:))(?:[A-Za-z]:)?(?:[~.\w-]*[/\\])+[\w.-]*")
_NUMBER = re.compile(r"0x[0-9a-fA-F]+|\d+(?:\.\d+)*")
WORD = re.compile(r"[A-Za-z][A-Za-z0-9]{1,39}")  # a word of a message (or a title)
MIN_MESSAGE_WORDS = 3  # an error message shorter than this says too little to match on

# Python's line between an error and the one raised from it (`raise Wrapper(...) from error`).
_RAISED_FROM = re.compile(r"^[^\S\n]*The above exception was the direct cause of", re.M)


def _unquoted(m: re.Match[str]) -> str:
    """A quoted name stays in a message (`module 'pyarrow.lib' has no attribute 'ListViewType'`
    is another error than the same words about `'PIL.Image'`); any other quoted value, a file
    name or a path among them, goes."""
    inner = m.group(0)[1:-1]
    if _NAME.fullmatch(inner) and not _FILE_NAME.search(inner):
        return f" {inner} "
    return " "


def message_key(line: str) -> str:
    """An error line's message for comparison: the exception's name, quoted values but names,
    paths and numbers taken out, lower-cased; "" when fewer than `MIN_MESSAGE_WORDS` words
    remain."""
    text = _EXCEPTION_HEAD.sub("", _URL.sub(" ", line.strip()))
    text = _QUOTED.sub(_unquoted, text)
    text = _PATHLIKE.sub(" ", text)
    text = _NUMBER.sub(" ", text)
    words = [w.lower() for w in WORD.findall(text)]
    return " ".join(words) if len(words) >= MIN_MESSAGE_WORDS else ""


@dataclass(frozen=True)
class Wrappers:
    """The errors of a text that only ever end a traceback raised from an earlier error
    (`raise DatasetGenerationError(...) from error`): each the same in every report that reaches
    it, whatever the cause, which is the earlier error. Their messages (`message_key`) and the
    exceptions they name, lower-cased."""

    messages: frozenset[str] = frozenset()
    exceptions: frozenset[str] = frozenset()


def named_exception(line: str) -> str:
    """The exception an error line names (`datasets.builder.DatasetGenerationError: ...`:
    `datasetgenerationerror`), "" when it names none."""
    found = _EXCEPTION.search(line.split(":", 1)[0])
    return (found.group(1) or found.group(2)).lower() if found else ""


def raised_from(text: str) -> Wrappers:
    """The wrappers of `text` (`Wrappers`): an error line right after Python's "The above
    exception was the direct cause of the following exception", when an error came before."""
    if "direct cause" not in text:
        return Wrappers()
    lines = [(m.start(), m.group(0)) for m in _ERROR_LINE.finditer(text)]
    starts = [at for at, _ in lines]
    wrapping: set[int] = set()
    for marker in _RAISED_FROM.finditer(text):
        after = bisect.bisect_right(starts, marker.end())
        if after < len(starts) and starts[0] < marker.start():
            wrapping.add(after)
    if not wrapping:
        return Wrappers()
    outer = [line for n, (_, line) in enumerate(lines) if n in wrapping]
    inner = [line for n, (_, line) in enumerate(lines) if n not in wrapping]
    return Wrappers(
        messages=frozenset(map(message_key, outer)) - set(map(message_key, inner)) - {""},
        exceptions=frozenset(map(named_exception, outer)) - set(map(named_exception, inner)) - {""},
    )


def as_written(line: str) -> str:
    """An error line as the comment quotes it: without a code fence glued to its end, nor the
    emphasis around it (`_UnicodeDecodeError: ..._`)."""
    line = line.strip().rstrip("`").rstrip()
    for mark in ("**", "__", "*", "_"):
        if len(line) > 2 * len(mark) and line.startswith(mark) and line.endswith(mark):
            return line[len(mark) : -len(mark)].strip()
    return line
