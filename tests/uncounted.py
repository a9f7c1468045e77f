"""What `apply` may write when no vote counted: only the line on its own comment that says which
votes did not count, and why (issue 26); the proposal itself stays as it was, pending."""

from __future__ import annotations

from issue_assistant.comment import Plan, extract_plan


def only_the_uncounted_line(writes: list[tuple], comment_id: int | None, plan: Plan) -> bool:
    """True when `writes` (a memory tracker's, after the comment was posted) are at most one
    edit of the assistant's comment `comment_id` whose plan is `plan`, pending, with only the
    votes that did not count added."""
    if not writes:
        return True
    if len(writes) != 1 or writes[0][0] != "edit_comment" or writes[0][1] != comment_id:
        return False
    edited = extract_plan(writes[0][2])
    if edited is None or edited.status != "pending" or not edited.not_counted:
        return False
    same = [
        p.model_copy(update={"not_counted": []}).model_dump(mode="json") for p in (edited, plan)
    ]
    return same[0] == same[1]
