"""The assistant's comment on an issue, and the plan it carries: the first by the bot with a
valid plan for that issue; any other is ignored."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from issue_assistant.comment import Plan, extract_plan, is_assistant_comment
from issue_assistant.tracker.models import Comment


@dataclass
class Found:
    """The assistant's comment on an issue and the plan it carries."""

    comment: Comment
    plan: Plan


def find_assistant_comment(
    comments: Iterable[Comment], bot_login: str, repository: str, number: int
) -> Found | None:
    """The first comment by `bot_login` carrying a valid plan for this issue; others are ignored."""
    for c in comments:
        if c.user.login.lower() != bot_login.lower() or not is_assistant_comment(c.body):
            continue
        plan = extract_plan(c.body)
        if plan and plan.issue == number and plan.repository.lower() == repository.lower():
            return Found(c, plan)
    return None
