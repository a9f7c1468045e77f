"""Untrusted text made safe to show on GitHub: one sanitizer for comments, summaries and logs.

The text is cut to a prefix, cleaned of control, zero-width and bidi characters, flattened to one
line, cut to a window a little over the output limit (so the time depends on the limit, not on
the input's length), and parsed as
Markdown with markdown-it-py (CommonMark, GFM strikethrough, autolinks and linkify for bare URLs
and e-mail addresses, as GitHub links them). Walking the tokens, text is kept with every character
Markdown could read escaped; code spans and emphasis are kept; a link or image is kept only when
its normalised URL is inside the repository (`issue_assistant.urls`), else its text stays and the
link goes; raw HTML becomes text. Every `@` gets a zero-width space after it, so no mention, team
or e-mail address survives (after a non-ASCII letter, an unmatched backtick or a cut code span
alike), nor does a reference to another repository (`other/repo#1`).

The output is at most `limit` characters, cut between tokens or words, never inside a code span
or link, with `…` where text was cut.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token

from issue_assistant.labelnames import CONTROL_CHARS
from issue_assistant.urls import canonical_url

ZWSP = "\u200b"
LINK_REMOVED = "(link removed)"
IMAGE_REMOVED = "(image removed)"

# Cc (but tab and newline, which are whitespace), Cf (zero-width, bidi, tags), lone surrogates,
# and the invisible Hangul fillers.
_INVISIBLE = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891"
    "\u08e2\u115f\u1160\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\u3164"
    "\ufeff\uffa0\ufff9-\ufffb\ud800-\udfff\U000110bd\U000110cd\U00013430-\U0001343f"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f]"
)
# Escaped everywhere: what starts code, emphasis, links, HTML, entities, table cells, math.
_ESCAPE = re.compile(r"[\\`*_\[\]&|~$]")
# Escaped at the start of a line: headings, quotes, list items, breaks, setext lines, commands.
_LINE_START = re.compile(r"^(?:[#>+=/-]|\d{1,9}(?=[.)]))")
_OTHER_SPACE = re.compile(r"[^\S ]")
# What linkify left as text but GitHub could still link (`www.host.example`, an odd scheme).
_URL_LEFT = re.compile(r"(?i)(?<![a-z0-9+.-])(?:[a-z][a-z0-9+.-]*://|www\.[a-z0-9-])[^\s<]*")
_WWW = re.compile(r"(?i)(?<![a-z0-9])(www)(?=\.)")
_REPO_REF = re.compile(r"(?<![\w.-])([\w.-]+/[\w.-]+)#(?=\d)")
_LINKLIKE = re.compile(r"(?i)^(?:[a-z][a-z0-9+.-]*:|//|www\.)")


@cache
def parser() -> MarkdownIt:
    """The Markdown parser GitHub's dialect is read with (also used by the tests to check)."""
    md = MarkdownIt("commonmark", {"linkify": True, "html": True})
    md.enable(["table", "strikethrough", "linkify"])
    # Every link reaches the walk, which judges it; targets are seen as written (not re-encoded).
    md.validateLink = lambda url: True  # type: ignore[method-assign]
    md.normalizeLink = lambda url: url  # type: ignore[method-assign]
    md.normalizeLinkText = lambda url: url  # type: ignore[method-assign]
    return md


def clean(text: str | None) -> str:
    """Control, zero-width and bidi characters removed; whitespace runs as one space."""
    return " ".join(_INVISIBLE.sub("", text or "").split())


def visible(name: str) -> str:
    """`name` with each control or invisible character shown as an escape (`\\n`, `\\u202e`):
    a name is data, shown as it is, but nothing in it can end a line or a code span."""
    return _INVISIBLE.sub(
        lambda m: m.group().encode("unicode_escape").decode(),
        CONTROL_CHARS.sub(lambda m: m.group().encode("unicode_escape").decode(), name),
    )


def path_span(path: str, limit: int = 300, *, table: bool = False, link: bool = False) -> str:
    """A path from a checkout as one code span, whatever it holds (`visible`, then cut).
    `link`: the span is a link's text, at the start of a line: `]` is shown as `\\x5d`, else
    `[`a]: x`](...)` would read as a link reference definition, not a link."""
    text = visible(path)
    if link:
        text = text.replace("]", "\\x5d")
    return code_span(text if len(text) <= limit else text[: limit - 1] + "…", table=table)


def code_span(content: str, *, table: bool = False) -> str:
    """`content` as one Markdown code span (a fence longer than any backtick run inside)."""
    if not content:
        return ""
    if table:
        content = content.replace("|", "\\|")
    longest = max((len(run) for run in re.findall(r"`+", content)), default=0)
    fence = "`" * (longest + 1)
    pad = content[0] in "` " or content[-1] in "` "
    return f"{fence} {content} {fence}" if pad else f"{fence}{content}{fence}"


@dataclass
class _Context:
    repository: str
    issue: int | None
    table: bool
    plain: bool


class _Out:
    """The output under construction: at most `limit` characters, emphasis kept balanced."""

    def __init__(self, ctx: _Context, limit: int, defang: Callable[[str], str]) -> None:
        self.ctx = ctx
        self.limit = limit
        self.defang = defang
        self.parts: list[str] = []
        self.size = 0
        self.stack: list[str] = []
        self.full = False

    def _room(self) -> int:
        return self.limit - self.size - sum(len(m) for m in self.stack) - 1

    def _add(self, piece: str) -> None:
        self.parts.append(piece)
        self.size += len(piece)

    def atom(self, piece: str) -> None:
        """A piece that is kept whole or not at all (a code span, a link)."""
        if self.full or not piece:
            return
        if len(piece) <= self._room():
            self._add(piece)
        else:
            self.full = True

    def text(self, literal: str) -> None:
        if self.full or not literal:
            return
        # Entities are decoded by now (`&#8238;` is a bidi override again): clean once more.
        piece = self.defang(_OTHER_SPACE.sub(" ", _INVISIBLE.sub("", literal)))
        if not self.ctx.plain:
            piece = _ESCAPE.sub(r"\\\g<0>", piece)
            # `<` as an entity: no `<!--` in the raw text either, so no forged marker or plan.
            piece = piece.replace("<", "&lt;")
            if self.size == 0:
                piece = _LINE_START.sub(_escape_start, piece, count=1)
        room = self._room()
        if len(piece) <= room:
            self._add(piece)
            return
        cut = piece[: max(room, 0)]
        space = cut.rfind(" ", max(0, len(cut) - 24))
        if space > 0:
            cut = cut[:space]
        cut = cut.rstrip()
        if (len(cut) - len(cut.rstrip("\\"))) % 2:
            cut = cut[:-1]  # never end on a backslash that would escape the `…`
        self._add(cut)
        self.full = True

    def open(self, markup: str) -> None:
        if not self.full and self._room() >= 2 * len(markup) + 1:
            self._add(markup)
            self.stack.append(markup)

    def close(self, markup: str) -> None:
        if not self.full and self.stack and self.stack[-1] == markup:
            self.stack.pop()
            self._add(markup)

    def result(self) -> str:
        text = "".join(self.parts)
        if self.full:
            text = text.rstrip()
            if (len(text) - len(text.rstrip("\\"))) % 2:
                text = text[:-1]
            text += "…"
        return text + "".join(reversed(self.stack))


def _escape_start(m: re.Match[str]) -> str:
    """`# x` -> `\\# x`; `1. x` -> `1\\. x` (the text would start a heading or a list)."""
    mark = m.group(0)
    return mark + "\\" if mark.isdigit() else "\\" + mark


def _defanger(repository: str) -> Callable[[str], str]:
    own = repository.lower()

    def repo_ref(m: re.Match[str]) -> str:
        return m.group(0) if m.group(1).lower() == own else m.group(0) + ZWSP

    def defang(text: str) -> str:
        text = _URL_LEFT.sub(LINK_REMOVED, text)
        text = text.replace("@", "@" + ZWSP)
        text = text.replace("://", ":" + ZWSP + "//")
        text = _WWW.sub(lambda m: m.group(0) + ZWSP, text)
        return _REPO_REF.sub(repo_ref, text)

    return defang


def _plain(tokens: list[Token]) -> str:
    """The literal text of inline tokens (an image's alt text, a link's text)."""
    out: list[str] = []
    for t in tokens:
        if t.type in ("softbreak", "hardbreak"):
            out.append(" ")
        elif t.children:
            out.append(_plain(t.children))
        else:
            out.append(t.content)
    return "".join(out)


def _closing(tokens: list[Token], start: int) -> int:
    depth = 0
    for j in range(start, len(tokens)):
        if tokens[j].type == "link_open":
            depth += 1
        elif tokens[j].type == "link_close":
            depth -= 1
            if depth == 0:
                return j
    return len(tokens) - 1


def _walk(tokens: list[Token], out: _Out) -> None:
    ctx = out.ctx
    i = 0
    while i < len(tokens) and not out.full:
        t = tokens[i]
        kind = t.type
        if kind in ("text", "html_inline", "text_special"):
            out.text(t.content)
        elif kind in ("softbreak", "hardbreak"):
            out.text(" ")
        elif kind == "code_inline":
            out.atom(f"`{t.content}`" if ctx.plain else code_span(t.content, table=ctx.table))
        elif kind.endswith("_open") and kind != "link_open":
            if ctx.plain:
                pass
            else:
                out.open(t.markup)
        elif kind.endswith("_close") and kind != "link_close":
            if not ctx.plain:
                out.close(t.markup)
        elif kind == "image":
            _image(t, out)
        elif kind == "link_open":
            j = _closing(tokens, i)
            _link(t, tokens[i + 1 : j], out)
            i = j
        else:
            out.text(t.content)
        i += 1


def _image(t: Token, out: _Out) -> None:
    ctx = out.ctx
    alt = _plain(t.children or [])
    url = canonical_url(str(t.attrGet("src") or ""), ctx.repository, ctx.issue)
    if url is None:
        out.text(alt)
        out.atom((" " if alt.strip() else "") + IMAGE_REMOVED)
    elif ctx.plain:
        out.atom(url)
    else:
        out.atom(f"![{_sub(alt, out)}]({url})")


def _link(t: Token, children: list[Token], out: _Out) -> None:
    ctx = out.ctx
    text = _plain(children)
    auto = t.markup in ("autolink", "linkify")
    if t.markup == "linkify" and not (_LINKLIKE.match(text) or "@" in text):
        out.text(text)  # a fuzzy link (`setup.py`) that GitHub does not make a link of
        return
    url = canonical_url(str(t.attrGet("href") or ""), ctx.repository, ctx.issue)
    if url is None:
        if not auto:
            _walk(children, out)
        out.atom((" " if not auto and text.strip() else "") + LINK_REMOVED)
    elif ctx.plain:
        out.atom(url if auto else f"{text} ({url})")
    elif auto:
        out.atom(f"<{url}>")
    else:
        inner = _Out(ctx, 10**9, out.defang)
        inner.size = 1  # not at the start of a line
        _walk(children, inner)
        out.atom(f"[{inner.result()}]({url})")


def _sub(literal: str, out: _Out) -> str:
    inner = _Out(out.ctx, 10**9, out.defang)
    inner.size = 1  # not at the start of a line
    inner.text(literal)
    return inner.result()


def sanitize(
    text: str | None,
    repository: str,
    limit: int = 2000,
    *,
    issue: int | None = None,
    table: bool = False,
    plain: bool = False,
) -> str:
    """`text` made safe to show on one line of a comment about `repository` (see the module).

    `table`: the text goes in a table cell (`|` escaped in code spans too). `plain`: for a log,
    no Markdown escaping, but mentions, links and control characters are handled the same.
    The same arguments give the same text: the last `KEPT` answers are kept (a candidate's title
    is shown again in the comment on every issue it is similar to).
    """
    return _sanitize(text or "", repository, limit, issue, table, plain)


KEPT = 4096


@lru_cache(maxsize=KEPT)
def _sanitize(
    text: str, repository: str, limit: int, issue: int | None, table: bool, plain: bool
) -> str:
    # Cut before cleaning too (a generous prefix): the time then depends on the limit only.
    flat = clean(text[: 8 * limit + 4096])
    if not flat:
        return ""
    ctx = _Context(repository, issue, table, plain)
    out = _Out(ctx, limit, _defanger(repository))
    tokens = parser().parseInline(flat[: limit + 256])
    _walk((tokens[0].children or []) if tokens else [], out)
    return out.result()


RAW_KEYS = frozenset({"type", "areas", "topics", "priority", "engine", "model", "status"})


def sanitize_json(
    value: Any, repository: str, *, raw_keys: frozenset[str] = RAW_KEYS, plain: bool = False
) -> Any:
    """Every string in a JSON value sanitized, but those under `raw_keys` (label names).

    `plain`: for JSON a program reads (the Action's outputs): no Markdown escaping, so keys and
    values stay as they are (`fallback_from`, not `fallback\\_from`); mentions, links out of the
    repository and control characters are still neutralised."""

    def clean_value(v: Any) -> Any:
        return sanitize_json(v, repository, raw_keys=raw_keys, plain=plain)

    if isinstance(value, str):
        return sanitize(value, repository, plain=plain)
    if isinstance(value, list):
        return [clean_value(v) for v in value]
    if isinstance(value, dict):
        return {
            sanitize(str(k), repository, 200, plain=plain): v if k in raw_keys else clean_value(v)
            for k, v in value.items()
        }
    return value


class LogSanitizer(logging.Filter):
    """A logging filter: each record's message goes through the sanitizer (plain mode)."""

    def __init__(self, repository: str = "", limit: int = 2000) -> None:
        super().__init__()
        self.repository = repository
        self.limit = limit

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = sanitize(record.getMessage(), self.repository, self.limit, plain=True)
        record.args = None
        return True
