"""The questions' second half: when the reporter answers, look again at what is missing.

An approved proposal asked the reporter questions and added the needs-info label. Once the
reporter (the issue's author) has commented since, what the questions asked for is checked
again with the new text (`asking.unanswered`); when nothing is missing any more, the assistant's
comment is edited into a new proposal, pending approval like every write: take the needs-info
label off. Like the approval sweep, it takes the tracker on GitHub, not a moment (see `moment`).
"""

from __future__ import annotations

import logging
from datetime import datetime

from issue_assistant.approve.assistant_comment import find_assistant_comment
from issue_assistant.approve.sweep import ApplyResult
from issue_assistant.asking import unanswered
from issue_assistant.comment import Plan, render_comment
from issue_assistant.config.labels import LabelsConfig
from issue_assistant.config.sections import Config
from issue_assistant.labelnames import find_label
from issue_assistant.tracker.base import WritableTracker
from issue_assistant.tracker.models import Issue
from issue_assistant.writes import Writer

log = logging.getLogger(__name__)


def follow_up(
    tracker: WritableTracker,
    labels: LabelsConfig,
    config: Config,
    issue: Issue,
    writes: str,
    now: datetime,
) -> ApplyResult:
    """Look at one issue: the reporter's answer to approved questions, and what is missing.
    `proposed`: the comment now proposes taking the label off; else `skipped`, with why."""
    n = issue.number

    def skipped(reason: str) -> ApplyResult:
        log.info("#%d: no follow-up: %s", n, reason)
        return ApplyResult(n, "skipped", reason)

    needs = find_label(issue.labels, labels.needs_info) if labels.needs_info else None
    if needs is None:
        return skipped("no needs-info label on the issue")
    comments = tracker.list_comments(n)
    bot = config.approval.bot_login
    found = find_assistant_comment(comments, bot, tracker.repository.full_name, n)
    if found is None or found.comment.id is None:
        return skipped(f"no comment with a plan by {bot}")
    plan = found.plan
    if plan.status != "approved" or not plan.questions or not plan.history:
        return skipped("no approved questions to the reporter")
    asked_at = plan.history[-1].at
    reporter = issue.user.login.casefold()
    replies = [
        c for c in comments if c.user.login.casefold() == reporter and c.created_at > asked_at
    ]
    if not replies:
        return skipped("the reporter has not answered since the questions were approved")
    types = [t for t in [plan.type, *issue.labels] if t and labels.group_of(t) == "type"]
    now_issue = issue.model_copy(update={"comments": comments})
    still = unanswered(plan.questions, labels, types, now_issue)
    if still:
        return skipped(f"still missing: {'; '.join(still)}")
    asked = len(plan.questions)
    why = [
        f"The reporter answered on {replies[-1].created_at:%Y-%m-%d}; what the {asked} "
        f"question(s) asked for is in the issue now."
    ]
    # A new proposal in the same comment: only the label to take off, the record kept.
    proposal = Plan(
        repository=plan.repository,
        issue=plan.issue,
        reporter=plan.reporter,
        created_at=now,
        engine=plan.engine,
        model=plan.model,
        history=plan.history,
        labels_before=list(issue.labels),
        remove=[needs],
        why=why,
    )
    writer = Writer(tracker, writes)  # type: ignore[arg-type]
    writer.edit_comment(found.comment.id, render_comment(proposal), "the comment (answered)")
    pending = config.approval.pending_label
    if find_label(issue.labels, pending) is None:
        writer.add_labels(n, [pending])
    log.info("#%d: the reporter answered; proposed to remove %r", n, needs)
    reason = f"the reporter answered: proposed to remove {needs!r}"
    return ApplyResult(n, "proposed", reason, writes=writer.done, comment_url=found.comment.url)


def follow_up_all(
    tracker: WritableTracker,
    labels: LabelsConfig,
    config: Config,
    writes: str,
    now: datetime,
    numbers: list[int] | None = None,
) -> list[ApplyResult]:
    """`follow_up` on `numbers`, or on every open issue with the needs-info label."""
    if not labels.needs_info:
        return []
    if numbers is None:
        issues = tracker.issues_with_label(labels.needs_info, state="open")
    else:
        issues = [tracker.get_issue(n) for n in numbers]
    return [follow_up(tracker, labels, config, i, writes, now) for i in issues]
