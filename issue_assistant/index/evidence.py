"""What two issues share that a maintainer can check: the evidence behind a duplicate.

Read from each issue once (`traits`): its error lines (compared by their message with numbers,
quoted values other than names, and paths taken out, so `Requested slice [:10] incompatible with
20 examples` and the same error at other sizes match, and `module 'pyarrow.lib' has no attribute
'ListViewType'` and the same words about `'PIL.Image'` do not), exception names, stack frames in
the order they appear (Python tracebacks, IPython's and Colab's, JavaScript and Java `at` lines),
file paths, identifiers, the pages it links (`link_key`: host and path, never the host alone),
the title's words and the body's. `shared` keeps what both have, in the new issue's own words
(and the title words both titles and both bodies use: what both are about); `describe` quotes it
(each piece one code span) for the comment's table, which sanitizes it again; `strongest` names
the one piece that makes a duplicate likely, for the duplicate line. `follow_up` tells a port,
backport or follow-up of the other issue: related, never its duplicate.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from types import SimpleNamespace
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from issue_assistant.index.query import (
    _ERROR_LINE,
    _EXCEPTION,
    _URL,
    STOPWORDS,
    clean_title,
    signals,
    strip_template,
)
from issue_assistant.index.search import _ANALYZER

if TYPE_CHECKING:
    from datetime import datetime

    from issue_assistant.index.search import IssueIndex

# Frames: `File "x.py", line 3, in f`; IPython `File ~/x.py:3, in f(...)`; Colab
# `[/x.py](url) in f(...)`; JavaScript `at f (x.js:1:2)`; Java `at a.B.f(B.java:3)`; .NET
# `at N.Type.Method(String s) in /src/Type.cs:line 42` at a line's start (the file part only
# with symbols).
_FRAMES = (
    re.compile(r'File "([^"\n]+)", line \d+, in ([\w<>.]+)'),
    re.compile(r"File (\S+?\.py):\d+, in ([\w<>.]+)"),
    re.compile(r"\[?(/[^\]\s()]+\.py)\]?(?:\([^)\s]*\))? in ([\w<>.]+)\("),
    re.compile(r"\bat (?:async )?([\w$.<>]+) \(([^()\s]+?\.[cm]?[jt]sx?):\d+(?::\d+)?\)"),
    re.compile(r"\bat ([\w$.]+)\.([\w$<>]+)\((\w+\.(?:java|kt|scala)):\d+\)"),
    re.compile(
        r"^[^\S\n]*at ((?:[\w<][\w`<>+$]*\.)*[\w<][\w`<>+$]*)\.([\w<>`$|]+)"
        r"(?:\[[^\]\n]{0,200}\])?\((?![\w.]+\.(?:java|kt|scala):\d+\))[^()\n]{0,500}\)",
        re.MULTILINE,
    ),
)
# The traces that list the frame nearest the error first (JavaScript, Java, .NET): read in
# reverse, so that a stack's innermost frames are its last, as in Python's.
_INNERMOST_FIRST = frozenset({3, 4, 5})
# A .NET async method runs in a state machine: `<ReadAsync>d__5.MoveNext` is `ReadAsync`.
_STATE_MACHINE = re.compile(r"<(\w+)>d__\d+")
_FRAME_RUN = re.compile(r"[^\]\s()]+")  # the characters of `_FRAMES[2]`'s path
_QUOTE_MARK = re.compile(r"^[ \t]*(?:>[ \t]?)+", re.MULTILINE)
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
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]{1,39}")
# Python's line between an error and the one raised from it (`raise Wrapper(...) from error`).
_RAISED_FROM = re.compile(r"^[^\S\n]*The above exception was the direct cause of", re.M)
# A repository or dataset id, `owner/name` (`allenai/c4`, `Yaxin/SemEval2015`): one slash, not
# part of a path or URL, an owner as GitHub and the Hub spell them, a name with a digit, `-`,
# `_` or `.` (so not prose: "and/or", "image/audio", "ImageFolder/AudioFolder"), not a file.
_REPO_ID = re.compile(
    r"(?<![\w./-])[A-Za-z][\w-]{0,38}[A-Za-z0-9]/(?=[\w.-]*[\d_.-])[A-Za-z0-9][\w.-]{0,98}"
    r"[A-Za-z0-9](?![\w/])"
)
_EXTENSION = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,7}$")  # `data/train.parquet`: a file
INNERMOST = 4  # the frames nearest the error, where two reports of one crash agree
MIN_MESSAGE_WORDS = 3  # an error message shorter than this says too little to match on
# A piece held by so many earlier issues that its rarity is below this is not named as evidence
# (about a sixth of them, on a tracker of a few thousand issues).
MIN_SPECIFIC = 0.25
MIN_KNOWN = 20
# The earlier issues read for whether an error is a wrapper (`Rarity.wrapper`), the phrase
# their bodies hold.
WRAPPERS_READ = 20
_CHAINED = ("direct", "cause")
# Uncommon title words both titles and both bodies use that name what two issues are about.
MIN_TOPIC = 2

# A port or backport in a title: a release-branch prefix ("[release/2.1]", "[backport 1.x]"),
# "Port ..." or "Backport ..." at its start, or the words anywhere ("cherry-pick", "backport").
_PORT_TITLE = re.compile(
    r"^\s*(?:\[[^\]]*\b(?:release|backport|port|branch|cherry[- ]?pick)[^\]]*\]"
    r"|(?:back)?port(?:ed|ing)?\b)"
    r"|\bback[- ]?port|\bcherry[- ]?pick|\bfollow[- ]?up\b",
    re.IGNORECASE,
)
# A reference that says the two are the same: not a follow-up.
_SAME_WORDS = re.compile(
    r"(?:duplicate of|same (?:issue|problem|bug|error|thing) as|same as|also in)\s*$", re.IGNORECASE
)


# A link to an issue, pull request or discussion is a reference (`follow_up` reads those), not a
# page both reports show.
_REFERENCE = re.compile(r"/(?:issues|pulls?|discussions)/\d+(?:/|$)")
_LINK_END = ")]}>.,;:!?'\"`*"


def link_key(url: str) -> str | None:
    """A link as two issues are compared on it: its host (lower-cased, without `www.`), path and
    query, without the scheme or a fragment (`arxiv.org/abs/2007.02871`); None for a bare host
    (it says nothing: `github.com`), a reference to an issue or pull request, or no URL."""
    try:
        parts = urlsplit(url.rstrip(_LINK_END))
        host = (parts.hostname or "").removeprefix("www.")
    except ValueError:
        return None
    path = parts.path.rstrip("/")
    if not host or not path.strip("/") or _REFERENCE.search(path):
        return None
    return host + path + (f"?{parts.query}" if parts.query else "")


def _links(text: str) -> dict[str, str]:
    keys = (link_key(m.group(0)) for m in _URL.finditer(text))
    return {k: k for k in keys if k is not None}


def follow_up(title: str, body: str, other: int, other_title: str = "") -> bool:
    """Whether an issue (`title`, `body`) is a port, backport or follow-up of issue `other`, or
    `other` of a change the issue ports: either title marks a port, or the issue refers to
    `other` (by `#N` or its URL) other than to call it the same problem."""
    if _PORT_TITLE.search(title) or (other_title and _PORT_TITLE.search(other_title)):
        return True
    ref = re.compile(rf"(?:#|/issues/|/pull/){other}(?!\d)")
    for m in ref.finditer(body or ""):
        before = body[max(0, m.start() - 40) : m.start()]
        if not _SAME_WORDS.search(before.rstrip("([ `")):
            return True
    return False


@dataclass(frozen=True)
class Traits:
    """One issue's evidence: keys to compare, each mapped to how the issue wrote it."""

    errors: dict[str, str] = field(default_factory=dict)
    exceptions: dict[str, str] = field(default_factory=dict)
    stack: tuple[str, ...] = ()  # "file.py:function", in the order they appear
    paths: dict[str, str] = field(default_factory=dict)
    identifiers: dict[str, str] = field(default_factory=dict)
    links: dict[str, str] = field(default_factory=dict)  # `link_key`
    title_words: dict[str, str] = field(default_factory=dict)
    body_words: frozenset[str] = frozenset()  # the body's word stems, as `_word_key` keys them


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
    words = [w.lower() for w in _WORD.findall(text)]
    return " ".join(words) if len(words) >= MIN_MESSAGE_WORDS else ""


def _word_key(word: str) -> str:
    """A title word's stem (`slicing` and `slice` match), as the index analyses words."""
    stems = _ANALYZER.analyze(word)
    return stems[0] if stems else word.lower()


def _keyed(items: tuple[str, ...]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        out.setdefault(item.lower(), item)
    return out


def _colab_frames(text: str) -> Iterator[re.Match[str]]:
    """`_FRAMES[2]`'s matches as `finditer` finds them, each run of a path's characters read
    once: a match starts only at a run's first `/` (or the `[` before it), for a later start in
    the run could end its path only where that one could."""
    pattern, end = _FRAMES[2], 0
    for run in _FRAME_RUN.finditer(text):
        slash = text.find("/", run.start(), run.end())
        if run.start() < end or slash < 0:
            continue
        m = pattern.match(text, slash - 1 if text[slash - 1 : slash] == "[" else slash)
        if m:
            end = m.end()
            yield m


def frames(text: str) -> tuple[str, ...]:
    """The stack frames in `text` as `file:function` (a .NET frame as `Type:Method`), innermost
    last: in the order they appear, each run of a trace listing the innermost first (`at`
    lines) reversed; repeats kept once, at their first place."""
    found: list[tuple[int, int, str]] = []
    for kind, pattern in enumerate(_FRAMES):
        for m in _colab_frames(text) if pattern is _FRAMES[2] else pattern.finditer(text):
            groups = m.groups()
            if len(groups) == 3:  # Java: class, method, file
                file, func = groups[2], groups[1]
            elif kind == 3:  # JavaScript: function, file
                func, file = groups
            elif kind == 5:  # .NET: namespace and type, method
                types, func = groups[0].split("."), groups[1]
                machine = _STATE_MACHINE.fullmatch(types[-1])
                if machine and func == "MoveNext" and len(types) > 1:
                    types, func = types[:-1], machine.group(1)
                file = types[-1].split("`")[0]
            else:
                file, func = groups
            name = re.split(r"[/\\]", file)[-1]
            found.append((m.start(), kind, f"{name}:{func.rsplit('.', 1)[-1]}"))
    found.sort()
    ordered: list[str] = []
    run: list[str] = []
    for _, kind, frame in found:
        if kind in _INNERMOST_FIRST:
            run.append(frame)
            continue
        ordered += reversed(run)
        run = []
        ordered.append(frame)
    ordered += reversed(run)
    return tuple(dict.fromkeys(ordered))


@dataclass(frozen=True)
class Wrappers:
    """The errors of a text that only ever end a traceback raised from an earlier error
    (`raise DatasetGenerationError(...) from error`): each the same in every report that reaches
    it, whatever the cause, which is the earlier error. Their messages (`message_key`) and the
    exceptions they name, lower-cased."""

    messages: frozenset[str] = frozenset()
    exceptions: frozenset[str] = frozenset()


def _head(line: str) -> str:
    """The exception an error line names (`datasets.builder.DatasetGenerationError: ...`:
    `datasetgenerationerror`), "" when it names none."""
    found = _EXCEPTION.search(line.split(":", 1)[0])
    return (found.group(1) or found.group(2)).lower() if found else ""


def raised_from(text: str) -> Wrappers:
    """The wrappers of `text` (`Wrappers`): an error line right after Python's "The above
    exception was the direct cause of the following exception", when an error came before."""
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
        exceptions=frozenset(map(_head, outer)) - set(map(_head, inner)) - {""},
    )


def _as_written(line: str) -> str:
    """An error line as the comment quotes it: without a code fence glued to its end, nor the
    emphasis around it (`_UnicodeDecodeError: ..._`)."""
    line = line.strip().rstrip("`").rstrip()
    for mark in ("**", "__", "*", "_"):
        if len(line) > 2 * len(mark) and line.startswith(mark) and line.endswith(mark):
            return line[len(mark) : -len(mark)].strip()
    return line


def traits(title: str, body: str) -> Traits:
    """What `shared` compares, read from an issue's title and (boilerplate-free) body; an error
    raised from another (`raised_from`) is left out, its cause kept."""
    unquoted = _QUOTE_MARK.sub("", body)
    sig = signals(title, unquoted)
    wrappers = raised_from(unquoted) if "direct cause" in unquoted else Wrappers()
    errors: dict[str, str] = {}
    for line in sig.errors:
        key = message_key(line)
        if key and key not in wrappers.messages:
            errors.setdefault(key, _as_written(line))
    whole = f"{title}\n{unquoted}"
    text = _URL.sub(" ", whole)
    ids = tuple(i for i in _REPO_ID.findall(text) if not _EXTENSION.search(i))
    # a name read only inside a link (its host, `arxiv.org`; its file) is no name the issue uses:
    # the link is compared whole (`links`)
    ids += tuple(i for i in sig.identifiers if i in text)
    words = {}
    for w in _WORD.findall(clean_title(title)):
        if w.lower() not in STOPWORDS:
            words.setdefault(_word_key(w), w)
    return Traits(
        errors=errors,
        exceptions=_keyed(tuple(e for e in sig.exceptions if e.lower() not in wrappers.exceptions)),
        stack=frames(strip_template(unquoted)),
        paths=_keyed(sig.paths),
        identifiers=_keyed(ids),
        links=_links(whole),
        title_words=words,
        body_words=frozenset(_ANALYZER.analyze(unquoted)),
    )


@dataclass(frozen=True)
class Shared:
    """What both issues have, in the new issue's words, strongest kind first."""

    errors: tuple[str, ...] = ()
    frames: tuple[str, ...] = ()  # innermost first
    exceptions: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    identifiers: tuple[str, ...] = ()
    links: tuple[str, ...] = ()  # the same page linked (host and path)
    title_words: tuple[str, ...] = ()
    # the title words both titles and both bodies hold: what both issues are about
    topic: tuple[str, ...] = ()
    frame_overlap: float = 0.0  # share of the new issue's innermost frames the other has
    inner_frames: tuple[str, ...] = ()  # those frames
    error_keys: tuple[str, ...] = ()  # the shared errors' messages, as compared
    # the title words only one of the two titles has (either's): where the titles say
    # different things ("... in the JIT", "... in the GC"), not shown
    title_apart: tuple[str, ...] = ()

    def specific(self, rarity: Rarity, floor: float = MIN_SPECIFIC) -> Shared:
        """Without the exceptions, files, names and title words most earlier issues have too
        (`load_dataset`, `datasets` in a datasets tracker) and the errors earlier issues show
        raised from another (`Rarity.wrapper`): they say nothing to a reader. The rest of each
        kind rarest first (the first is the one `strongest` names)."""

        def keep(items: tuple[str, ...]) -> tuple[str, ...]:
            rare = [(rarity.piece(i), n, i) for n, i in enumerate(items)]
            return tuple(i for r, _, i in sorted(rare, key=lambda x: (-x[0], x[1])) if r >= floor)

        pairs = list(zip(self.errors, self.error_keys, strict=True))
        wrapped = [(line, key) for line, key in pairs if rarity.wrapper(key)]
        heads = {_head(line) for line, _ in wrapped} - {""}

        def unwrapped(items: tuple[str, ...]) -> tuple[str, ...]:
            return tuple(i for i in items if i.rsplit(".", 1)[-1].lower() not in heads)

        errors = [pair for pair in pairs if pair not in wrapped]
        return replace(
            self,
            errors=tuple(line for line, _ in errors),
            error_keys=tuple(key for _, key in errors),
            exceptions=keep(unwrapped(self.exceptions)),
            paths=keep(self.paths),
            identifiers=keep(unwrapped(self.identifiers[:12])),
            links=keep(self.links[:12]),
            title_words=keep(self.title_words),
            topic=keep(self.topic),
            title_apart=keep(self.title_apart),
        )

    @property
    def subject(self) -> tuple[str, ...]:
        """The title words both titles and both bodies use, when there are `MIN_TOPIC` of them
        and neither title has an uncommon word the other lacks (after `specific`): what both
        issues are about; none otherwise ("Clean dead code in the JIT" and "... in the GC"
        share `Clean`, `dead` but are about two things)."""
        return self.topic if len(self.topic) >= MIN_TOPIC and not self.title_apart else ()

    def __bool__(self) -> bool:
        return any(
            (
                self.errors,
                self.frames,
                self.exceptions,
                self.paths,
                self.identifiers,
                self.links,
                self.title_words,
            )
        )


def frame_overlap(mine: tuple[str, ...], theirs: tuple[str, ...]) -> float:
    """How much of `mine`'s innermost stack (its last `INNERMOST` frames) `theirs` holds, when
    the two share at least two frames (one frame, `main` or `load`, says nothing)."""
    other = set(theirs)
    if len(set(mine) & other) < 2:
        return 0.0
    inner = mine[-INNERMOST:]
    return sum(1 for f in inner if f in other) / len(inner)


def shared(mine: Traits, theirs: Traits) -> Shared:
    """What `mine` (the new issue) and `theirs` both have, as `mine` wrote it."""

    def common(a: dict[str, str], b: dict[str, str]) -> tuple[str, ...]:
        return tuple(v for k, v in a.items() if k in b)

    error_keys = tuple(k for k in mine.errors if k in theirs.errors)

    other = set(theirs.stack)
    in_both = [f for f in mine.stack if f in other]
    overlap = frame_overlap(mine.stack, theirs.stack)
    # the frames of the shared stack nearest the error first; none when only one is shared
    frames_shown = tuple(reversed(in_both)) if overlap > 0 else ()
    errors = common(mine.errors, theirs.errors)
    named = {e.lower() for e in errors}
    return Shared(
        errors=errors,
        frames=frames_shown,
        exceptions=tuple(
            e
            for e in common(mine.exceptions, theirs.exceptions)
            if not any(e.lower() in n for n in named)
        ),
        paths=common(mine.paths, theirs.paths),
        # an identifier that is a path or a frame already named is not named twice
        identifiers=tuple(
            i
            for i in common(mine.identifiers, theirs.identifiers)
            if i.lower() not in theirs.paths and not any(f.endswith(":" + i) for f in in_both)
        ),
        links=common(mine.links, theirs.links),
        title_words=common(mine.title_words, theirs.title_words),
        topic=tuple(
            v
            for k, v in mine.title_words.items()
            if k in theirs.title_words and k in mine.body_words and k in theirs.body_words
        ),
        frame_overlap=overlap,
        inner_frames=tuple(f for f in mine.stack[-INNERMOST:] if f in other) if overlap else (),
        error_keys=error_keys,
        title_apart=tuple(v for k, v in mine.title_words.items() if k not in theirs.title_words)
        + tuple(v for k, v in theirs.title_words.items() if k not in mine.title_words),
    )


_PIECE = re.compile(r"[A-Za-z0-9]+")


class Rarity:
    """How specific a shared piece is at a moment: 1 for a piece no earlier issue holds, near 0
    for one most issues hold (`load_dataset` in a datasets tracker), from the index's counts of
    the issues created before the month of the moment (so nothing later is read); 1 for every
    piece while fewer than `MIN_KNOWN` issues are that old."""

    def __init__(self, index: IssueIndex, moment: datetime) -> None:
        self.index = index
        self.before = moment.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
        self.total = index.issues_with((), self.before, phrase=False)

    def of(self, words: tuple[str, ...], *, phrase: bool = True) -> float:
        if not words:
            return 0.0
        if self.total < MIN_KNOWN:
            return 1.0  # too few earlier issues to tell what is common

        n = self.index.issues_with(words, self.before, phrase=phrase)
        return max(0.0, 1.0 - math.log1p(n) / math.log1p(self.total))

    def frame(self, frame: str) -> float:
        """A frame by its function's name (`verify_splits`: the phrase `verify splits`)."""
        func = frame.rpartition(":")[2]
        return self.of(tuple(_PIECE.findall(func.lower()))[:6]) if func.strip("<>_") else 0.0

    def message(self, key: str) -> float:
        """An error message key by its words, each required (numbers and values are gone); 0
        for a wrapper (`wrapper`)."""
        return 0.0 if self.wrapper(key) else self.of(tuple(key.split())[:8], phrase=False)

    def wrapper(self, key: str) -> bool:
        """Whether an earlier issue shows this error raised from another (`raised_from`): a
        report that pasted only the last lines shows the wrapper alone, and it says no more
        there (`DatasetGenerationError: An error occurred while generating the dataset`)."""
        memo = self.index.memo
        seen = ("wrapper", key, self.before)
        if seen not in memo:
            words = tuple(key.split())[:8]
            bodies = self.index.bodies_with(words, _CHAINED, self.before, WRAPPERS_READ)
            memo[seen] = any(key in raised_from(body).messages for body in bodies)
        return bool(memo[seen])

    def piece(self, text: str) -> float:
        """An exception, path, name or title word by the phrase of its words."""
        return self.of(tuple(_PIECE.findall(text.lower()))[:6])


# How many of each kind `describe` quotes at most, strongest kind first.
QUOTED = (
    ("errors", 1),
    ("frames", 3),
    ("exceptions", 2),
    ("paths", 2),
    ("links", 2),
    ("identifiers", 3),
    ("subject", 3),
    ("title_words", 5),
)


def describe(found: Shared, limit: int) -> str:
    """What two issues share, in words with each piece quoted as one code span (cut before it is
    quoted), at most `limit` characters: the weakest pieces go first until it fits; "" when
    nothing is shared. The comment sanitizes it again where it shows it."""
    from issue_assistant.render import render

    # a title word both bodies use is named once, as what both are about
    words = [w for w in found.title_words if w not in found.subject]
    kept = {
        kind: (words if kind == "title_words" else list(getattr(found, kind)))[:most]
        for kind, most in QUOTED
    }
    while True:
        text = render("shared.md.j2", s=SimpleNamespace(**kept)).strip()
        if len(text) <= limit:
            return text
        kind = next((k for k, _ in reversed(QUOTED) if kept[k]), None)
        if kind is None:
            return ""
        kept[kind].pop()


def strongest(found: Shared, limit: int = 100) -> str:
    """The one piece of `found` that makes a duplicate most likely, in plain words (quoted as
    one code span, an error line cut to about `limit` characters): the shared error message,
    else the innermost shared frame, the exception, a file, a name, what both titles and
    descriptions are about, and the title words only when nothing else is shared; "" when
    nothing is."""
    from issue_assistant.render import render

    return render("shared_one.md.j2", s=found, limit=limit).strip()
