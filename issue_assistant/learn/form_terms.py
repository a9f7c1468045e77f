"""The structure of an issue's body as words a label model learns weights for: which template or
issue form it was written from.

A body written from an issue form or a Markdown template says which one by its headings ("###
Describe the bug", "## Steps to reproduce", "**Is your feature request related to a problem?**",
"### Motivation") and, in a form, by the options chosen in its dropdowns ("Issue Kind: Brand new
capability"). Each heading of a field answered is one term (`h_describe_the_bug`), read with
`forms.py`'s parser. A Markdown template also says which one it is in its HTML comments, the
guidance a reporter leaves in place ("<!-- Do Not Delete This! feature_request_template -->",
"<!-- Describe the feature you'd like. -->"), and some templates have no headings at all: each
comment outside code is one term of its first words (`m_do_not_delete_this_feature_request`).
The headings make a block of their own (`learn/features.py`, `form_terms`), the comments
another (`template_comments`), whose weights the model learns from the repository's own
history. A body without headings or comments has no term.
A field left empty, and a form's dropdown answers, give none by default (`bench/form_terms.py`
measures them: the answers of a form's free one-line fields, versions and systems, said less
than they cost).
"""

from __future__ import annotations

import re

from issue_assistant import forms

_WORD = re.compile(r"[^\W\d_]+")
HEADING_WORDS = 6
CHOICE_WORDS = 4
MAX_SECTIONS = 24
MAX_COMMENTS = 12
COMMENT = "m_"  # the prefix of a comment's term (a block of its own, `learn/features.py`)
_FENCE_LINE = re.compile(r"^[^\S\n]{0,3}(```|~~~)")
_COMMENT = re.compile(r"<!--(.*?)(?:-->|\Z)", re.DOTALL)


def _words(text: str, limit: int) -> str:
    return "_".join(_WORD.findall(text.casefold())[:limit])


def _outside_code(body: str) -> str:
    kept, fenced = [], False
    for line in body.splitlines():
        if _FENCE_LINE.match(line):
            fenced = not fenced
        elif not fenced:
            kept.append(line)
    return "\n".join(kept)


def comment_terms(body: str | None) -> list[str]:
    """One term per distinct HTML comment outside code: its first words (`m_...`)."""
    if not body or "<!--" not in body:
        return []
    out: list[str] = []
    for found in _COMMENT.finditer(_outside_code(body)):
        term = f"{COMMENT}{_words(found.group(1), HEADING_WORDS)}"
        if term != COMMENT and term not in out:
            out.append(term)
            if len(out) == MAX_COMMENTS:
                break
    return out


def form_terms(
    body: str | None, empty: str = "skip", choices: bool = False, comments: bool = True
) -> list[str]:
    """The terms of `body`'s headings, dropdown answers and HTML comments. `empty`: what a field
    left empty gives, "skip" (no term), "mark" (`e_...`) or "same" (the heading's own term);
    `choices`: whether a form's dropdown answers give terms
    (`c_issue_kind__brand_new_capability`); `comments`: whether its comments do
    (`comment_terms`)."""
    form = forms.parse(body)
    answers = form or forms.parse_template(body)
    out = []
    for answer in list(answers.fields.values())[:MAX_SECTIONS]:
        heading = _words(answer.label, HEADING_WORDS)
        if not heading:
            continue
        if answer.empty and empty == "skip":
            continue
        out.append(f"{'e' if answer.empty and empty == 'mark' else 'h'}_{heading}")
        if choices and form and answer.choice:
            said = _words(answer.text, CHOICE_WORDS)
            if said:
                out.append(f"c_{heading}__{said}")
    if comments:
        out.extend(comment_terms(body))
    return out


def form_text(body: str | None) -> str:
    """The terms of `body` as the text of the model's third column (`learn/text.fields`)."""
    return " ".join(form_terms(body))
