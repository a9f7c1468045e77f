"""The text a label model reads: the title, the reporter's prose with templates reduced, and the
terms of the body's template or form (`learn/form_terms.py`)."""

from __future__ import annotations

import re
from functools import lru_cache

from issue_assistant.learn.form_terms import form_text
from issue_assistant.tracker.models import Issue

# (title, prose, form terms): the columns the features read
Doc = tuple[str, str, str]

_COMMENT = re.compile(r"<!--.*?(-->|$)", re.DOTALL)
_FENCE = re.compile(r"```[^\n]*\n?(.*?)(```|$)", re.DOTALL)
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+", re.MULTILINE)
_URL = re.compile(r"\bhttps?://\S+", re.IGNORECASE)
# `[^\S\n]*`, not `\s*`, before the box: a run of blank lines is not read again from each line.
_CHECKBOX = re.compile(r"^[^\S\n]*[-*]\s*\[[ xX]\]\s*", re.MULTILINE)
_BRACKET_PREFIX = re.compile(r"^\s*\[[^\]]{1,30}\]:?\s*")

BODY_LIMIT = 3000


def _code(match: re.Match[str]) -> str:
    """A code block reduced to its last non-empty line (an error's name and message, mostly)."""
    lines = [ln.strip() for ln in match.group(1).splitlines() if ln.strip()]
    return f" codeblock {lines[-1][:200]} " if lines else " codeblock "


def prose(body: str | None, limit: int = BODY_LIMIT) -> str:
    """The body without HTML comments (template hints), code reduced, headings kept as words."""
    text = _COMMENT.sub(" ", body or "")
    text = _FENCE.sub(_code, text)
    text = _HEADING.sub(" ", text)
    text = _CHECKBOX.sub(" ", text)
    text = _URL.sub(" url ", text)
    return " ".join(text.split())[:limit]  # each run of whitespace one space (as `\s+`)


def title(text: str) -> str:
    return " ".join(text.split())


def fields(issue: Issue) -> Doc:
    """(title, prose, form terms) of an issue, as the features read them."""
    return _fields(issue.title, issue.body or "")


@lru_cache(maxsize=8192)
def _fields(raw_title: str, body: str) -> Doc:
    """Kept by text: evaluate reads each earlier issue again for every time bucket."""
    return title(raw_title), prose(body), form_text(body)
