"""Portable cues of an issue's kind in its title, as words a label model learns weights for.

What a maintainer reads first to tell a question or a docs report from a bug: a title asked as a
question ("How do I ...", "Is it possible ...", "Why does ..."), a title ending in "?", a title
about the documentation (docs, README, typo, docstring). Each cue is one term (`cue_...`) of a
block of its own (`learn/features.py`, `title_cues`); the model learns how much each says in the
repository's own history, so a question-mark title over a traceback can still be a bug. The words
are English, as the rest of the features' vocabulary is.

A title with none of them has no cue term (a term every title had would be the intercept over
again, and would slow the fit's convergence); a history where no title has one gets no block.
"""

from __future__ import annotations

import re

_ASK = re.compile(
    r"^\W*(\[?question\]?\s*:?\s*)?("
    r"how\s+(do|does|can|could|should|would|to|is|are|much|many)\b"
    r"|(is|are)\s+(it|there)\s+(possible|a\s+way|any\s+way|an?\s+)"
    r"|(can|could|should|would|may)\s+(i|we|you|one|it|this)\b"
    r"|why\s+(does|do|is|are|did|can|can't|cannot|doesn't|isn't|would)\b"
    r"|what\s+(is|are|does|do|should|'s)\b"
    r"|(where|when|which)\s+(is|are|do|does|should|can)\b"
    r"|(does|do|is|are)\s+\w+"
    r"|question\b)",
    re.IGNORECASE,
)
_DOCS = re.compile(
    r"\b(docs?|document\w*|undocumented|typos?|readme|docstrings?|tutorials?"
    r"|guide|misspel\w*|spelling|broken\s+link|dead\s+link)\b",
    re.IGNORECASE,
)


def title_cues(text: str) -> list[str]:
    """The cue terms of a title: `cue_ask`, `cue_qmark`, `cue_docs` (none of a stated title)."""
    out = []
    text = text.strip()
    if _ASK.search(text):
        out.append("cue_ask")
    if text.endswith("?"):
        out.append("cue_qmark")
    if _DOCS.search(text):
        out.append("cue_docs")
    return out
