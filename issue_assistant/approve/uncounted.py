"""The uncounted-votes line of a pending comment: which votes did not count and why, said in the
comment itself so that the voter sees it."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable

from issue_assistant.approve.assistant_comment import Found, find_assistant_comment
from issue_assistant.approve.claims import Claims
from issue_assistant.comment import render_comment
from issue_assistant.errors import GitHubError
from issue_assistant.tracker.base import WritableTracker
from issue_assistant.tracker.models import Comment
from issue_assistant.votes import VoteRule
from issue_assistant.writes import Writer

log = logging.getLogger(__name__)


def say_uncounted(
    tracker: WritableTracker,
    rule: VoteRule,
    claims: Claims,
    new_writer: Callable[[], Writer],
    found: Found,
    reactions: Iterable,
    comments: list[Comment],
) -> list[str]:
    """Say in the pending comment which votes did not count and why (`Plan.not_counted`),
    only when that changed: under this run's claim, the votes read again right before the
    edit (one that counts is left to the next run), and once more after it (a vote given
    during the edit was set aside by it: the comment then asks for it again). The writes done
    (by a writer from `new_writer`)."""
    plan, cid, n, now = found.plan, found.comment.id, found.plan.issue, claims.now
    shown = rule.shown_uncounted(plan, found.comment, reactions, comments, now)
    if cid is None or shown == plan.not_counted:
        return []
    writer, what = new_writer(), "the comment (votes not counted)"
    if writer.mode != "live":
        writer.edit_comment(
            cid, render_comment(plan.model_copy(update={"not_counted": shown})), what
        )
        return writer.done
    mine = claims.held is None  # else this run holds the claim already (`Approver.process`)
    try:
        if mine and (claim := claims.take(cid)) is None:
            return []  # another run is at work on it
        if mine:
            claims.held = (cid, claim)
        for _ in range(2):
            comments = tracker.list_comments(n)
            current = find_assistant_comment(comments, rule.bot, tracker.repository.full_name, n)
            if current is None or current.comment.id != cid or current.plan.status != "pending":
                break
            reactions = tracker.comment_reactions(cid)
            if rule.first_vote(current.comment, reactions, comments, now) is not None:
                break
            shown = rule.shown_uncounted(current.plan, current.comment, reactions, comments, now)
            if shown == current.plan.not_counted:
                break
            body = render_comment(current.plan.model_copy(update={"not_counted": shown}))
            writer.edit_comment(cid, body, what)
    except GitHubError as exc:  # the line is for people: the run goes on without it
        log.warning("#%d: could not say which votes did not count (%s)", n, exc)
    finally:
        if mine and claims.held is not None:
            try:
                claims.withdraw()
            except GitHubError as exc:
                log.warning("#%d: could not withdraw the claim (%s)", n, exc)
    return writer.done
