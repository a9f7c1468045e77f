"""The one vote rule (issue 8, items 1, 3, 13, 14): what counts as a vote, from whom, on what."""

from __future__ import annotations

import pytest

from issue_assistant.comment import extract_plan, render_comment
from issue_assistant.votes import slash_command
from tests.test_approve import BOT, PENDING, approver, make_tracker, plan_of, post_plan


@pytest.mark.parametrize(
    "body",
    [
        "```\n/assistant approve\n```",
        "~~~text\n/assistant dismiss\n~~~",
        "Run this:\n\n    /assistant approve\n",
        "> /assistant approve",
        "> quoted\n> /assistant approve",
        ">> /assistant approve",
        "- /assistant approve",
        "1. /assistant approve",
        "<!--\n/assistant approve\n-->",
        "<details>\n/assistant approve\n</details>",
        "reply `/assistant approve` to apply",
        "`/assistant approve`",
        "/assistant approved",
        "/assistant approve-later",
    ],
)
def test_commands_in_code_quotes_lists_or_html_do_not_count(body):
    assert slash_command(body) is None


@pytest.mark.parametrize(
    ("body", "action"),
    [
        ("/assistant approve", "approve"),
        ("Looks right.\n/assistant approve", "approve"),
        ("thanks!\n  /Assistant DISMISS please", "dismiss"),
        ("> earlier text\n\n/assistant dismiss", "dismiss"),
        ("```\nlog\n```\n\n/assistant approve", "approve"),
    ],
)
def test_command_on_its_own_line_counts(body, action):
    assert slash_command(body) == action


def test_a_command_in_a_fenced_block_does_not_approve():
    t = make_tracker()
    comment = post_plan(t, type="bug")
    t.add_comment(2, "maria", "Do not run:\n```\n/assistant approve\n```\n")
    t.add_comment(2, "maria", "    /assistant approve")
    [result] = approver(t).run()
    assert result.status == "waiting" and t.writes == []
    assert plan_of(t, comment).status == "pending"


def _reanalyse(t, comment, **fields) -> None:
    """What `analyze` does on a re-run: edit the comment to a new proposal."""
    plan = extract_plan(t.comment(comment.id).body).model_copy(update=fields)
    t.edit_comment(comment.id, render_comment(plan))
    t.writes.clear()


@pytest.mark.parametrize("via", ["reaction", "command"])
def test_a_vote_older_than_the_last_edit_does_not_approve_the_new_plan(via):
    t = make_tracker()
    comment = post_plan(t, type="bug")
    if via == "reaction":
        t.react(comment.id, "maria", "+1")
    else:
        t.add_comment(2, "maria", "/assistant approve")
    _reanalyse(t, comment, type="feature")  # the comment changed after the vote
    [result] = approver(t).run()
    assert result.status == "waiting" and [w[0] for w in t.writes] == ["edit_comment"]
    assert plan_of(t, comment).status == "pending" and plan_of(t, comment).type == "feature"
    said = "`/assistant approve`" if via == "command" else "a 👍"
    line = f"Not counted: {said} from `maria` (given before this proposal was last changed: "
    assert line + "please vote again)." in t.comment(comment.id).body
    # a vote given on the new text counts
    t.react(comment.id, "ada", "+1")
    [result] = approver(t).run()
    assert result.status == "approved" and result.actor == "ada"
    assert "feature" in t.issues[2].labels and "bug" not in t.issues[2].labels


def test_a_vote_after_the_edit_counts():
    t = make_tracker()
    comment = post_plan(t, type="bug")
    _reanalyse(t, comment, type="feature")
    t.add_comment(2, "wade", "/assistant approve")
    [result] = approver(t).run()
    assert result.status == "approved" and "feature" in t.issues[2].labels


def test_reporter_who_is_a_maintainer_may_approve_and_the_footer_says_so():
    t = make_tracker()
    t.roles["bob"] = "maintain"  # bob reported #2
    comment = post_plan(t, type="bug")
    t.add_comment(2, "bob", "/assistant approve")
    [result] = approver(t).run()
    assert result.status == "approved" and result.actor == "bob"
    body = t.comment(comment.id).body
    footer = [line for line in body.splitlines() if line.startswith("<sub>")]
    assert footer and "approved by the reporter" in footer[0]


def test_footer_does_not_mention_the_reporter_when_someone_else_approves():
    t = make_tracker()
    comment = post_plan(t, type="bug")
    t.react(comment.id, "maria", "+1")
    approver(t).run()
    assert "approved by the reporter" not in t.comment(comment.id).body


def test_bot_reactions_and_claims_are_never_votes():
    t = make_tracker()
    comment = post_plan(t, type="bug")
    t.react(comment.id, BOT, "+1")
    t.react(comment.id, BOT, "eyes")
    [result] = approver(t).run()
    assert result.status == "waiting"
    assert PENDING in t.issues[2].labels


def test_the_edit_time_decides_to_the_second():
    from datetime import UTC, datetime, timedelta

    from issue_assistant.tracker.models import Comment, Reaction, User
    from issue_assistant.votes import VoteRule

    posted = datetime(2026, 1, 1, tzinfo=UTC)
    edited = posted + timedelta(minutes=5)
    comment = Comment(id=1, user=User(login=BOT), created_at=posted, updated_at=edited)
    rule = VoteRule(lambda login: "maintain", ["maintain"], BOT)

    def vote_at(moment):
        reaction = Reaction(user=User(login="maria"), content="+1", created_at=moment)
        return rule.first_vote(comment, [reaction], [], edited)

    assert vote_at(edited - timedelta(seconds=1)) is None  # given on the earlier text
    assert vote_at(edited) is None  # the same second: for neither text (issue 16)
    assert vote_at(edited + timedelta(seconds=1)).actor == "maria"
    unedited = comment.model_copy(update={"updated_at": posted})
    reaction = Reaction(user=User(login="maria"), content="+1", created_at=posted)
    assert rule.first_vote(unedited, [reaction], [], posted) is not None


def test_a_vote_that_did_not_count_says_why_in_the_status():
    """A 👍 from someone without a role that decides, and a command given before the last edit:
    the proposal still waits, and its status says why each was not counted."""
    t = make_tracker()
    comment = post_plan(t, type="bug")
    t.add_comment(2, "maria", "/assistant approve")
    _reanalyse(t, comment, type="feature")
    t.react(comment.id, "stranger", "+1")
    [result] = approver(t).run()
    assert result.status == "waiting" and [w[0] for w in t.writes] == ["edit_comment"]
    assert result.reason == (
        "`/assistant approve` from @maria was not counted: it came before the proposal was last "
        "changed, so vote again; a 👍 from @stranger was not counted: no triage role"
    )
    # the comment says it too, in one line, the logins as code (no mention that notifies)
    assert (
        "Not counted: a 👍 from `stranger` (no triage role); `/assistant approve` from `maria` "
        "(given before this proposal was last changed: please vote again)."
    ) in t.comment(comment.id).body
    assert "@stranger" not in t.comment(comment.id).body
    t.react(comment.id, "ada", "+1")  # a maintainer: it counts, the others are not mentioned
    [result] = approver(t).run()
    assert result.status == "approved"


@pytest.mark.parametrize("writes", ["dry-run", "off"])
def test_the_not_counted_line_is_only_said_in_dry_run(writes):
    t = make_tracker()
    comment = post_plan(t, type="bug")
    before = t.comment(comment.id).body
    t.react(comment.id, "rita", "+1")
    [result] = approver(t, writes).run()
    assert result.status == "waiting" and t.writes == [] and t.claims == []
    assert result.writes == [f"edit the comment (votes not counted) ({comment.id})"]
    assert t.comment(comment.id).body == before


def test_a_vote_the_comment_already_asks_again_for_is_not_said_twice():
    """A maintainer's vote set aside by analyze's edit ("Please vote again") is not also in the
    not-counted line; someone else's is."""
    from issue_assistant.comment import SetAside

    t = make_tracker()
    comment = post_plan(t, type="bug")
    t.react(comment.id, "maria", "+1")
    t.react(comment.id, "rita", "+1")
    asked = [SetAside(actor="maria", via="+1 reaction")]
    _reanalyse(t, comment, set_aside=asked)
    [result] = approver(t).run()
    assert result.status == "waiting"
    plan = plan_of(t, comment)
    assert [v.actor for v in plan.not_counted] == ["rita"] and plan.set_aside == asked
    body = t.comment(comment.id).body
    assert body.count("`maria`") == 1 and "Please vote again" in body
