"""BERT's uncased WordPiece tokenizer in plain Python, for the shipped word vectors.

What the `tokenizers` package does with all-MiniLM-L6-v2's `tokenizer.json` (BertNormalizer:
clean text, spaces around CJK characters, accents stripped, lowercase; BertPreTokenizer: split on
white space and punctuation; WordPiece: the longest piece of the vocabulary first, `##` before a
piece inside a word, a word of more than `MAX_WORD` characters or with no split `[UNK]`), without
the package in the image. `tests/test_wordpiece.py` checks the ids against `tokenizers` itself on
the shared data.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache

MAX_WORD = 100
UNKNOWN = "[UNK]"
INSIDE = "##"
KEPT_WORDS = 65_536  # words whose pieces are remembered
# control, format, private-use and surrogate characters (an unassigned one is kept, as there)
DROPPED = ("Cc", "Cf", "Co", "Cs")


def _cjk(cp: int) -> bool:
    return (
        0x4E00 <= cp <= 0x9FFF
        or 0x3400 <= cp <= 0x4DBF
        or 0x20000 <= cp <= 0x2A6DF
        or 0x2A700 <= cp <= 0x2B73F
        or 0x2B740 <= cp <= 0x2B81F
        or 0x2B820 <= cp <= 0x2CEAF
        or 0xF900 <= cp <= 0xFAFF
        or 0x2F800 <= cp <= 0x2FA1F
    )


def _punctuation(ch: str) -> bool:
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


# ASCII text, the common case, by translation and one pattern: the same as the general path
_ASCII = str.maketrans(
    {**{chr(i): None for i in range(32)}, "\t": " ", "\n": " ", "\r": " ", "\x7f": None}
)
_ASCII_WORDS = re.compile(r"[A-Za-z0-9]+|[^\sA-Za-z0-9]")


def _normalized(text: str) -> str:
    """`DROPPED` characters dropped, white space as a space, CJK characters spaced, accents
    stripped, lowercase."""
    out = []
    for ch in text:
        cp = ord(ch)
        if ch in "\t\n\r" or unicodedata.category(ch) == "Zs":
            out.append(" ")
        elif cp == 0xFFFD or unicodedata.category(ch) in DROPPED:
            continue
        elif _cjk(cp):
            out.append(f" {ch} ")
        else:
            out.append(ch)
    decomposed = unicodedata.normalize("NFD", "".join(out))
    stripped = "".join(ch for ch in decomposed if unicodedata.category(ch) != "Mn")
    # each character lowercased alone, as the reference does: no final sigma
    return stripped.replace("\u03a3", "\u03c3").lower()


def _words(text: str) -> list[str]:
    """White space splits, and each punctuation character is a word of its own."""
    words: list[str] = []
    for chunk in text.split():
        start = 0
        for i, ch in enumerate(chunk):
            if _punctuation(ch):
                if i > start:
                    words.append(chunk[start:i])
                words.append(ch)
                start = i + 1
        if start < len(chunk):
            words.append(chunk[start:])
    return words


class WordPiece:
    """Text to the vocabulary's ids."""

    def __init__(self, vocabulary: Sequence[str]) -> None:
        self.ids = {piece: i for i, piece in enumerate(vocabulary)}
        self.unknown = self.ids[UNKNOWN]
        self.longest = max(len(p) for p in vocabulary)
        self.pieces = lru_cache(maxsize=KEPT_WORDS)(self._pieces)

    def _pieces(self, word: str) -> tuple[int, ...]:
        if len(word) > MAX_WORD:
            return (self.unknown,)
        out = []
        start = 0
        while start < len(word):
            end = min(len(word), start + self.longest)
            found = None
            while end > start:
                piece = word[start:end] if start == 0 else INSIDE + word[start:end]
                found = self.ids.get(piece)
                if found is not None:
                    break
                end -= 1
            if found is None:
                return (self.unknown,)
            out.append(found)
            start = end
        return tuple(out)

    def encode(self, text: str, limit: int | None = None) -> list[int]:
        """The ids of `text` (no [CLS] or [SEP]); the first `limit` of them when given."""
        ids: list[int] = []
        if text.isascii():
            words = _ASCII_WORDS.findall(text.translate(_ASCII).lower())
        else:
            words = _words(_normalized(text))
        for word in words:
            ids.extend(self.pieces(word))
            if limit is not None and len(ids) >= limit:
                return ids[:limit]
        return ids
