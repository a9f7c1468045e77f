"""Turn free issue text into a safe tantivy query string."""

from __future__ import annotations

import re

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
