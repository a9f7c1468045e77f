"""The comment: rendering, the plan marker round trip, and untrusted text made inert."""

from datetime import UTC, datetime

from issue_assistant.comment import (
    Outcome,
    Plan,
    encode_plan,
    extract_plan,
    is_assistant_comment,
    render_comment,
)
from issue_assistant.decision import Duplicate
from tests.markdown_check import problems

NOW = datetime(2024, 7, 1, 9, 2, 6, tzinfo=UTC)


def plan(**kw) -> Plan:
    base = dict(
        repository="o/r",
        issue=12,
        reporter="alice",
        type="bug",
        areas=["engine"],
        duplicate=Duplicate(number=7, reason="same crash", confidence=0.8),
        questions=["Which version?"],
        summary="A crash.",
        engine="similar",
        created_at=NOW,
    )
    base.update(kw)
    return Plan(**base)


def test_pending_comment_shows_everything_and_how_to_approve():
    body = render_comment(plan())
    assert is_assistant_comment(body)
    visible, why = body.split("<details><summary>Why</summary>")
    assert "**Proposed:** `bug` · `engine`\n" in visible
    # Each part is its own Markdown paragraph, not run together.
    assert "`engine`\n\n**Possibly the same problem" in visible
    assert "**Possibly the same problem as #7**: same crash\n\n@alice, could you" in visible
    assert "@alice, could you tell us:\n\n- Which version?\n" in visible
    assert "/assistant approve" in visible and "👍" in visible and "👎" in visible
    # The score and the engine's summary are for maintainers, in "Why".
    assert "0.80" not in visible and "A crash." not in visible
    assert "- The match with #7 scores 0.80 (of 1).\n" in why
    assert "- The engine's summary: A crash.\n" in why
    # The reporter is the only one mentioned.
    assert body.split("<!-- issue-assistant:plan")[0].count("@") == 1


def test_the_reporter_is_mentioned_only_by_a_login():
    assert "@alice, could you tell us:" in render_comment(plan())
    for odd in ("dependabot[bot]", "a--b", "-x", "x y", "@everyone", "a" * 40, ""):
        body = render_comment(plan(reporter=odd))
        assert "Questions for the reporter:\n\n- Which version?" in body
        assert "@" not in body.split("<!-- issue-assistant:plan")[0]
    # Once decided, the questions are no longer asked of anyone in the folded proposal.
    decided = plan(status="dismissed", history=[Outcome(action="dismissed", actor="c", at=NOW)])
    assert "@" not in render_comment(decided).split("<!-- issue-assistant:plan")[0]


def test_marker_round_trip():
    p = plan(
        history=[Outcome(action="approved", actor="bob", at=NOW, changes=["added bug"])],
        status="approved",
    )
    assert extract_plan(render_comment(p)) == p
    assert extract_plan("no marker here") is None
    assert extract_plan('<!-- issue-assistant:plan {"version": 99} -->') is None


def test_hostile_text_cannot_close_the_marker_or_mention_or_link():
    evil = "x --> <img src=https://evil.example/a.png> @everyone see http://evil.example/p"
    p = plan(summary=evil, questions=[evil], duplicate=Duplicate(number=7, reason=evil))
    body = render_comment(p)
    assert "-->" not in encode_plan(p)
    assert extract_plan(body) == p
    visible = body.split("<!-- issue-assistant:plan")[0]
    assert "evil.example" not in visible
    assert problems(body, "o/r", ("@alice",)) == []
    assert "&lt;img" in visible and "@\u200beveryone" in visible  # shown as text, inert
    ok = plan(summary="see https://github.com/o/r/issues/3").summary
    assert "https://github.com/o/r/issues/3" in render_comment(plan(summary=ok))


def test_approved_and_dismissed_fold_the_proposal():
    approved = plan(
        status="approved",
        history=[
            Outcome(action="approved", actor="bob", at=NOW, changes=["added labels bug, engine"])
        ],
    )
    body = render_comment(approved)
    assert "Approved by `bob` on 2024-07-01. Done: added labels bug, engine." in body
    assert "<details><summary>The proposal</summary>" in body
    assert "/assistant approve" not in body
    dismissed = render_comment(
        plan(status="dismissed", history=[Outcome(action="dismissed", actor="carol", at=NOW)])
    )
    assert "Dismissed by `carol` on 2024-07-01. Nothing was changed." in dismissed


def test_approved_questions_stay_in_view_addressed_to_the_reporter():
    approved = [Outcome(action="approved", actor="bob", at=NOW, changes=["x"], asked=True)]
    body = render_comment(plan(status="approved", history=approved))
    visible, proposal = body.split("<details><summary>The proposal</summary>")
    assert "Approved by `bob`" in visible
    assert "@alice, could you tell us:\n\n- Which version?\n" in visible
    # shown once: not again in the folded proposal
    assert "Which version?" not in proposal.split("<!-- issue-assistant:plan")[0]
    assert extract_plan(body).history[-1].asked
    # approved without asking them (closed as a duplicate): folded, asked of no one
    unasked = [Outcome(action="approved", actor="bob", at=NOW, changes=["x"])]
    body = render_comment(plan(status="approved", history=unasked))
    visible, proposal = body.split("<details><summary>The proposal</summary>")
    assert "Which version?" not in visible and "Questions for the reporter:" in proposal
    assert '"asked"' not in body  # the plan records it only when asked


def test_questions_mention_only_the_reporter():
    approved = [Outcome(action="approved", actor="bob", at=NOW, asked=True)]
    for status, history in (("pending", []), ("approved", approved)):
        body = render_comment(
            plan(questions=["Ask @someone-else?"], status=status, history=history)
        )
        text = body.split("<!-- issue-assistant:plan")[0]
        # the reporter, and the neutralized one (with a zero-width space)
        assert text.count("@") == 2, text
        assert "@alice" in text and "@someone-else" not in text


def test_empty_plan_says_nothing_to_apply():
    body = render_comment(plan(type=None, areas=[], duplicate=None, questions=[]))
    assert "Nothing to apply." in body and "/assistant approve" not in body


def test_links_outside_the_repository_become_text():
    from issue_assistant.render import safe_text

    cases = {
        "see [the fix](https://evil.example/x)": "see the fix (link removed)",
        "![pixel](https://evil.example/p.png)": "pixel (image removed)",
        "[ours](https://github.com/o/r/issues/3)": "[ours](https://github.com/o/r/issues/3)",
        "[sneaky](https://github.com/o/r.evil/issues/3)": "sneaky (link removed)",
        "[see](#12)": "[see](#12)",
        "go to //evil.example/path now": "go to (link removed) now",
        "ftp://x.example and www.evil.example": "(link removed) and (link removed)",
        "javascript:alert(1) [x](javascript:alert(1))": "javascript:alert(1) x (link removed)",
        "a/b//c stays": "a/b//c stays",
    }
    for text, expected in cases.items():
        assert safe_text(text, "o/r") == expected, text


def test_large_counts_read_with_thousands_separators():
    from issue_assistant.decision import LabelTier

    tier = LabelTier(tier="high", precision=0.95, correct=1_900, proposals=2_000)
    body = render_comment(plan(tiers={"bug": tier}, duplicate=None))
    assert "on this repository's history (1,900 of 2,000)" in body
