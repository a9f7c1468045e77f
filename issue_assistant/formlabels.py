"""What an issue form's answer says of the labels: a dropdown naming a kind ("Missing
documentation", "Feature request") is the reporter's own classification, strong evidence for the
type or area whose label it names."""

from __future__ import annotations

import re

from issue_assistant import forms
from issue_assistant.config.labels import GROUPS, LabelsConfig

# A field that asks what kind of issue it is (without the form, its label must say so).
_KIND_FIELD = re.compile(r"\b(kind|type|category|what best describes)\b", re.I)
_WORD = re.compile(r"[^\W\d_]{3,}")
# Words that name no kind by themselves.
_GENERIC = frozenset(
    ("kind", "type", "area", "topic", "issue", "other", "request", "report", "new", "the", "and")
)


def _stems(text: str) -> set[str]:
    return {w.casefold().rstrip("s") for w in _WORD.findall(text)} - _GENERIC


def _matches(answer: set[str], words: set[str]) -> bool:
    """A word of the answer and one of the label that are the same word or one a prefix of
    the other ("docs" and "documentation": `doc`)."""
    return any(a.startswith(w) or w.startswith(a) for a in answer for w in words if len(w) >= 3)


def kind_answers(answers: forms.Answers) -> list[forms.Answer]:
    """The answers that choose a kind: a dropdown (or, without the form, a one-line answer to a
    field named like "Issue Kind")."""
    return [
        a
        for a in answers.given()
        if a.choice and (a.kind == "dropdown" or _KIND_FIELD.search(a.label))
    ]


def kind_labels(answers: forms.Answers, labels: LabelsConfig) -> list[tuple[forms.Answer, str]]:
    """Each kind answer with the proposable label it names (by the label's name, else by its
    description when every word of the answer is in it)."""
    out: list[tuple[forms.Answer, str]] = []
    for answer in kind_answers(answers):
        words = _stems(answer.text)
        if not words:
            continue
        for group in GROUPS:
            for label in labels.group(group):  # type: ignore[arg-type]
                if not label.propose:
                    continue
                by_name = _matches(words, _stems(label.name))
                by_description = words <= _stems(label.description)
                if by_name or (label.description and by_description):
                    out.append((answer, label.name))
    return out


def _quoted(text: str, limit: int = 60) -> str:
    """The reporter's text on one short line, without backticks (it sits in a sentence; what
    shows it sanitizes it too)."""
    one = " ".join(text.replace("`", "'").split())
    return one if len(one) <= limit else one[: limit - 1].rstrip() + "…"


def because(answer: forms.Answer, names: list[str]) -> str:
    """The sentence for maintainers: what the form says and which labels it names."""
    shown = ", ".join(f"`{n}`" for n in names)
    label, said = _quoted(answer.label), _quoted(answer.text)
    return f"The form's '{label}' answer is '{said}', which names {shown}."
