"""What two issues share that a maintainer can check: the evidence behind a duplicate.

Read from each issue once (`traits`): its error lines by their message (`traces.message_key`),
those raised from another left out (`traces.raised_from`), exception names, stack frames innermost
last (`traces.frames`), file paths, identifiers, the pages it links (`link_key`: host and path,
never the host alone), the title's words and the body's. `shared` keeps what both have, in the
new issue's own words (and the title words both titles and both bodies use: what both are
about); `Rarity` says how specific a piece is among the earlier issues (`Shared.specific` drops
what most hold, and the errors they show raised from another); `describe` quotes it (each piece
one code span) for the comment's table, which sanitizes it again; `strongest` names the one
piece that makes a duplicate likely, for the duplicate line. `follow_up` tells a port, backport
or follow-up of the other issue: related, never its duplicate.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from types import SimpleNamespace
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from issue_assistant.index.query import _URL, STOPWORDS, clean_title, signals, strip_template
from issue_assistant.index.search import _ANALYZER
from issue_assistant.index.traces import (
    INNERMOST,
    WORD,
    as_written,
    frame_overlap,
    frames,
    message_key,
    named_exception,
    raised_from,
)

if TYPE_CHECKING:
    from datetime import datetime

    from issue_assistant.index.search import IssueIndex

_QUOTE_MARK = re.compile(r"^[ \t]*(?:>[ \t]?)+", re.MULTILINE)
# A repository or dataset id, `owner/name` (`allenai/c4`, `Yaxin/SemEval2015`): one slash, not
# part of a path or URL, an owner as GitHub and the Hub spell them, a name with a digit, `-`,
# `_` or `.` (so not prose: "and/or", "image/audio", "ImageFolder/AudioFolder"), not a file.
_REPO_ID = re.compile(
    r"(?<![\w./-])[A-Za-z][\w-]{0,38}[A-Za-z0-9]/(?=[\w.-]*[\d_.-])[A-Za-z0-9][\w.-]{0,98}"
    r"[A-Za-z0-9](?![\w/])"
)
_EXTENSION = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,7}$")  # `data/train.parquet`: a file
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
# "Port" or "Cherry-pick" at its start as a verb (of something quoted or numbered, or to a branch
# or version: "Port 'Fix the parser' to release", "Cherry-pick #42 into 6.0"; not "Port
# forwarding fails" nor "Cherry-pick fails with conflicts"), or "backport" or "follow-up"
# anywhere.
_PORT_TITLE = re.compile(
    r"^\s*(?:\[[^\]]*\b(?:release|backport|port|branch|cherry[- ]?pick)[^\]]*\]"
    r"|(?:port|cherry[- ]?pick)(?:ed|ing)?\s+(?:[\"'`#]|.*\b(?:in)?to\s+(?:the\s+)?"
    r"(?:release|main|master|v?\d+(?:\.(?:\d+|x)){0,2}\b(?!\.))))"
    r"|\bback[- ]?port|\bfollow[- ]?up\b",
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


def _word_key(word: str) -> str:
    """A title word's stem (`slicing` and `slice` match), as the index analyses words."""
    stems = _ANALYZER.analyze(word)
    return stems[0] if stems else word.lower()


def _keyed(items: tuple[str, ...]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        out.setdefault(item.lower(), item)
    return out


def traits(title: str, body: str) -> Traits:
    """What `shared` compares, read from an issue's title and (boilerplate-free) body; an error
    raised from another (`raised_from`) is left out, its cause kept."""
    unquoted = _QUOTE_MARK.sub("", body)
    sig = signals(title, unquoted)
    wrappers = raised_from(unquoted)
    errors: dict[str, str] = {}
    for line in sig.errors:
        key = message_key(line)
        if key and key not in wrappers.messages:
            errors.setdefault(key, as_written(line))
    whole = f"{title}\n{unquoted}"
    text = _URL.sub(" ", whole)
    ids = tuple(i for i in _REPO_ID.findall(text) if not _EXTENSION.search(i))
    # a name read only inside a link (its host, `arxiv.org`; its file) is no name the issue uses:
    # the link is compared whole (`links`)
    ids += tuple(i for i in sig.identifiers if i in text)
    words = {}
    for w in WORD.findall(clean_title(title)):
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
        heads = {named_exception(line) for line, _ in wrapped} - {""}

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
