"""The answered-questions check at approval: a question the reporter answered while the proposal
waited is not asked any more."""

from __future__ import annotations

from issue_assistant.approve.assistant_comment import Found
from issue_assistant.asking import unanswered
from issue_assistant.config.labels import LabelsConfig
from issue_assistant.tracker.models import Comment, Issue
from issue_assistant.votes import slash_command


def still_missing(
    issue: Issue, found: Found, comments: list[Comment], labels: LabelsConfig
) -> list[str]:
    """The plan's questions that the reporter's replies since the comment showed them (its
    votes aside) still leave open; all of them when there is no such reply."""
    plan, shown = found.plan, found.comment.created_at
    reporter = issue.user.login.casefold()
    replies = [
        c
        for c in comments
        if c.user.login.casefold() == reporter
        and c.created_at > shown
        and slash_command(c.body) is None
    ]
    if not replies:
        return list(plan.questions)
    types = [t for t in [plan.type, *issue.labels] if t and labels.group_of(t) == "type"]
    now_issue = issue.model_copy(update={"comments": comments})
    return unanswered(plan.questions, labels, types, now_issue)
