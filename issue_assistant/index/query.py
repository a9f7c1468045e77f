"""What identifies a problem, as search input: safe tantivy query strings and embedding text.

The title without the bracketed prefixes every report shares, error lines, exception names,
stack frames, file paths and identifiers weigh most; issue-form headings, template text and
environment sections are stripped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]{1,39}")
_URL = re.compile(r"https?://\S+")
_FENCE = re.compile(r"```.*?```", re.DOTALL)

STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "all",
        "also",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "him",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "get",
        "got",
        "use",
        "used",
        "using",
        "want",
        "like",
        "one",
        "two",
        "would",
        "could",
        "thanks",
        "thank",
        "hi",
        "hello",
        "please",
        "issue",
        "bug",
        "error",
        "problem",
        "work",
        "works",
        "working",
        "feature",
        "request",
        "describe",
        "expected",
        "behavior",
        "behaviour",
        "reproduce",
        "steps",
        "version",
        "information",
        "system",
        "info",
        "additional",
        "context",
        "following",
        "code",
    ]
)


def terms(text: str, limit: int = 48) -> list[str]:
    """Distinct lower-case words of `text`, stop words and code noise removed, first seen first.

    Identifiers split at underscores (`drop_duplicates` gives `drop`, `duplicates`), as the
    index's tokenizer does, so they match as words rather than as an exact phrase.
    """
    text = _URL.sub(" ", text)
    seen: dict[str, None] = {}
    for word in _WORD.findall(text):
        w = word.lower()
        if w in STOPWORDS or w.isdigit():
            continue
        seen.setdefault(w, None)
        if len(seen) >= limit:
            break
    return list(seen)


def issue_query(title: str, body: str | None, limit: int = 48) -> str:
    """Query words for an issue: all title words, then body words (code blocks weigh less)."""
    body = body or ""
    prose = _FENCE.sub(" ", body)
    words = terms(title, limit)
    for w in terms(prose, limit) + terms(body, limit):
        if len(words) >= limit:
            break
        if w not in words:
            words.append(w)
    return " ".join(words)


_HTML_COMMENT = re.compile(r"<!--.*?(-->|$)", re.DOTALL)
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*)$", re.MULTILINE)
_PREFIX = re.compile(
    r"^\s*(?:(?:\[[^\]:]{1,30}\]|\([^):]{1,30}\)|(?:bug|feature(?: request)?|question|"
    r"request|fr|rfc|docs?|enhancement|proposal)\s*:)\s*:?\s*)+",
    re.IGNORECASE,
)
_NOISE_SECTION = re.compile(
    r"environment|system info|versions?\b|platform|your contribution|who can help|"
    r"checklist|code of conduct|before submitting|additional (?:info|context)",
    re.IGNORECASE,
)
# A whole line of a template nobody filled in (a checkbox, "_No response_", "N/A", a version
# line), matched one line at a time (`fullmatch`: a search of the whole body tried the pattern
# at every character). `[^\S\n]`, not `\s`, which also matches newlines, and no two adjacent
# runs of the same characters: issue text is untrusted, and overlapping runs make a regular
# expression's time grow with a power of the length (a body of blank lines hung).
_BOILERPLATE = re.compile(
    r"[^\S\n]*(?:[-*][^\S\n]*\[[ xX]\](?:[^\S\n].*)?|_no response_|no response|n/?a|none|"
    r"(?:-[^\S\n]*)?`?\w[\w -]*`? version:.*|- platform:.*|- python version:.*)[^\S\n]*",
    re.IGNORECASE,
)
_EXCEPTION = re.compile(
    r"\b([A-Z][A-Za-z0-9]*(?:Error|Exception|Warning|Invalid|Exit|Interrupt|Panic))\b"
    r"|(?<=\.)([A-Z][A-Za-z0-9]+)(?=: )"
)
_ERROR_LINE = re.compile(
    r"^[^\S\n]*(?:[\w.]*(?:Error|Exception|Warning|Invalid)\b[:(].*"
    r"|[a-z_]\w*(?:\.\w+)*\.[A-Z]\w+: .*"
    r"|(?:error|fatal|panic)(?:\[\w+\])?:.*|thread '.*' panicked at.*)$",
    re.MULTILINE,
)
_FRAME = re.compile(r'File "([^"]+)", line \d+, in ([\w<>]+)')
_PATH = re.compile(
    # A file name is at most 255 characters (NAME_MAX): bounded runs keep the search linear.
    r"(?<![\w/])(?:[\w.-]{1,255}/){0,64}[\w-]{1,255}\."
    r"(?:py|pyx|js|ts|tsx|rs|go|java|c|cc|cpp|h|rb|toml|ya?ml|json|cfg|ini|md|lock)\b"
)
_IDENT = re.compile(
    r"\b(?:[A-Za-z_][A-Za-z0-9]*_[A-Za-z0-9_]+|[a-z]+[A-Z][A-Za-z0-9]+|"
    r"[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)+)\b"
)
_BACKTICK = re.compile(r"`([^`\n]{2,60})`")
_EXTENSIONS = frozenset({"py", "js", "ts", "json", "yaml", "yml", "toml", "md", "cfg", "lock"})
_GENERIC_IDS = frozenset({"e.g", "i.e", "etc.", "self", "print"})


def clean_title(title: str) -> str:
    """The title without the prefixes many reports share (`[Bug]:`, `[DevTools Bug]`, `Bug:`)."""
    cleaned = _PREFIX.sub("", title or "").strip()
    return cleaned or (title or "").strip()


def strip_template(body: str | None) -> str:
    """The body without HTML comments, issue-form headings, checkboxes and environment sections."""
    text = _HTML_COMMENT.sub(" ", body or "")
    out: list[str] = []
    skipping = False
    for line in text.splitlines():
        heading = _HEADING.match(line)
        if heading:
            skipping = bool(_NOISE_SECTION.search(heading.group(1)))
            continue
        if not skipping:
            out.append("" if _BOILERPLATE.fullmatch(line) else line)
    return "\n".join(out)


@dataclass(frozen=True)
class Signals:
    """What names a problem precisely: error lines, exceptions, frames, paths, identifiers."""

    errors: tuple[str, ...] = ()
    exceptions: tuple[str, ...] = ()
    frames: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    identifiers: tuple[str, ...] = ()

    def keys(self) -> set[str]:
        """Every signal, lower-cased, for overlap between two issues."""
        parts = (self.errors, self.exceptions, self.frames, self.paths, self.identifiers)
        return {x.lower() for group in parts for x in group}


def _distinct(items, limit: int) -> tuple[str, ...]:  # noqa: ANN001
    seen: dict[str, None] = {}
    for item in items:
        item = item.strip()
        if item and item.lower() not in _GENERIC_IDS:
            seen.setdefault(item, None)
        if len(seen) >= limit:
            break
    return tuple(seen)


def _errors(text: str) -> tuple[str, ...]:
    return _distinct((m.group(0)[:160] for m in _ERROR_LINE.finditer(text)), 8)


def signals(title: str, body: str | None) -> Signals:
    """The problem's identifying strings in the title and the (template-stripped) body."""
    text = f"{title}\n{strip_template(body)}"
    errors = _errors(text)
    frames = _distinct(
        (f"{m.group(1).rsplit('/', 1)[-1]}:{m.group(2)}" for m in _FRAME.finditer(text)), 12
    )
    paths = _distinct((m.group(0).rsplit("/", 2)[-1] for m in _PATH.finditer(text)), 12)
    idents = list(_IDENT.findall(text)) + [
        m for m in _BACKTICK.findall(_FENCE.sub(" ", text)) if re.fullmatch(r"[\w.()]+", m)
    ]
    return Signals(
        errors=errors,
        exceptions=_distinct((a or b for a, b in _EXCEPTION.findall(text)), 8),
        frames=frames,
        paths=paths,
        identifiers=_distinct((i.rstrip("()") for i in idents), 24),
    )


def problem_query(title: str, body: str | None, limit: int = 48) -> str:
    """A tantivy query string: title words and signal words boosted, then the prose's words."""
    title_words = terms(clean_title(title), limit)
    sig = signals(title, body)
    sig_text = " ".join(sig.exceptions + sig.identifiers + sig.frames + sig.paths)
    sig_words = [w for w in terms(sig_text, 24) if w not in title_words and w not in _EXTENSIONS]
    prose = strip_template(body)
    rest: list[str] = []
    taken = set(title_words) | set(sig_words)
    for w in terms(_FENCE.sub(" ", prose), limit) + terms(" ".join(sig.errors), limit):
        if len(taken) + len(rest) >= limit:
            break
        if w not in taken and w not in rest:
            rest.append(w)
    parts = [f"{w}^2" for w in title_words] + [f"{w}^1.5" for w in sig_words] + rest
    return " ".join(parts)


def problem_text(title: str, body: str | None, limit: int = 1200) -> str:
    """The text to embed: the cleaned title, the error lines, then the reporter's prose."""
    stripped = strip_template(body)
    prose = _URL.sub(" ", _FENCE.sub(" ", stripped))
    prose = " ".join(prose.split())  # each run of whitespace one space
    head = clean_title(title)
    errors = " ".join(_errors(f"{title}\n{stripped}")[:3])
    return f"{head}. {errors} {prose}"[:limit].strip()
