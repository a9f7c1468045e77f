"""Which questions an issue still needs: what its type asks for and the issue does not give,
and none at all where people are already talking on it or a maintainer opened it.

A piece of information is given when the issue form's field for it is answered, or when the
title, the reporter's answers (the whole body when it is not a form's) or the reporter's replies
say it (`config.Ask.answered`). Every engine's questions pass here (`decision.validate`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from issue_assistant import forms
from issue_assistant.config.labels import Ask, LabelsConfig
from issue_assistant.tracker.models import Issue

# From this many comments on, an issue is a discussion: a question would interrupt it.
LONG_DISCUSSION = 8

# Whether a login is one of the repository's maintainers (its GitHub association beside it).
IsMaintainer = Callable[[str, str | None], bool]


def replies(issue: Issue) -> list[str]:
    """What the reporter wrote in comments so far."""
    return [c.body for c in issue.comments or [] if c.user.login == issue.user.login]


def missing(asks: Iterable[Ask], issue: Issue, answers: forms.Answers | None = None) -> list[Ask]:
    """The asks the issue does not answer yet."""
    found = forms.parse(issue.body) if answers is None else answers
    said = replies(issue)
    return [a for a in asks if not a.answered(issue.title, found, issue.body or "", said)]


def hold(issue: Issue, is_maintainer: IsMaintainer) -> str | None:
    """Why no question is asked on `issue` (a plain sentence), or None when questions may be."""
    if is_maintainer(issue.user.login, issue.author_association):
        return "No question: a maintainer opened the issue."
    people = [c for c in issue.comments or [] if not c.user.is_bot]
    if len(people) >= LONG_DISCUSSION:
        return f"No question: the issue already has a discussion of {len(people)} comments."
    others = [c for c in people if c.user.login != issue.user.login]
    if any(is_maintainer(c.user.login, c.author_association) for c in others):
        return "No question: a maintainer has already commented."
    if others and any(
        c.user.login == issue.user.login and c.created_at > others[0].created_at for c in people
    ):
        return "No question: the reporter has already answered someone on the issue."
    return None


def kept_questions(
    questions: list[str],
    labels: LabelsConfig,
    types: list[str],
    issue: Issue,
    is_maintainer: IsMaintainer,
    answers: forms.Answers | None = None,
) -> tuple[list[str], list[str]]:
    """The questions still worth asking, and why the others were not (plain sentences): none on
    an issue people already discuss or a maintainer opened; none for what a type asks that the
    issue already gives."""
    if not questions:
        return [], []
    reason = hold(issue, is_maintainer)
    if reason:
        return [], [reason]
    asks = _asks(labels, types)
    if not asks:
        return questions, []
    answers = forms.parse(issue.body) if answers is None else answers
    need = {a.question.casefold().strip() for a in missing(asks, issue, answers)}
    known = {a.question.casefold().strip(): a for a in asks}
    kept, why = [], []
    for q in questions:
        key = q.casefold().strip()
        if key in known and key not in need:
            ask = known[key]
            where = f"the form's '{ask.field}' answer or " if ask.field and answers else ""
            why.append(f"Not asked for {ask.what}: {where}the issue's text gives it.")
        else:
            kept.append(q)
    return kept, why


def _asks(labels: LabelsConfig, types: list[str]) -> list[Ask]:
    return [a for t in types if (spec := labels.type_label(t)) for a in spec.ask]


def unanswered(
    questions: list[str], labels: LabelsConfig, types: list[str], issue: Issue
) -> list[str]:
    """The questions asked on `issue` that its text and the reporter's replies still do not
    answer: those of a type's asks still missing. A question no ask holds (an engine's own)
    cannot be checked: a reply counts as its answer."""
    asks = {a.question.casefold().strip(): a for a in _asks(labels, types)}
    still = missing(asks.values(), issue)
    return [q for q in questions if asks.get(q.casefold().strip()) in still]
