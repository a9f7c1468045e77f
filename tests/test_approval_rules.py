"""Label casing (item 4), cleanup on closed issues (item 11) and re-analysis races (item 1)."""

from __future__ import annotations

import logging

from issue_assistant.decision import Duplicate
from issue_assistant.errors import GitHubError
from tests.test_approve import approver, make_tracker, plan_of, post_plan
from tests.test_live import DECISION, config, run  # noqa: F401 (fixture)


def _pending_as(t, number: int, spelling: str) -> None:
    labels = t.issues[number].labels
    t.set_labels(number, [spelling if n == "assistant: pending" else n for n in labels])


def test_pending_label_with_other_casing_does_not_block_approval():
    t = make_tracker()
    comment = post_plan(t, type="bug", areas=["area: io"])
    _pending_as(t, 2, "Assistant: Pending")
    t.react(comment.id, "maria", "+1")
    [result] = approver(t).run()
    assert result.status == "approved"
    assert t.issues[2].labels == ["bug", "area: io"]  # and the pending label is gone
    assert plan_of(t, comment).status == "approved"
    assert approver(t).run() == []


def test_existing_labels_with_other_casing_count_as_present():
    t = make_tracker()
    t.set_labels(2, ["BUG", "Needs Info"])
    comment = post_plan(t, type="bug", questions=["Which version?"])
    t.react(comment.id, "maria", "+1")
    [result] = approver(t).run()
    assert result.status == "approved"
    assert not [w for w in t.writes if w[0] == "add_labels"]  # nothing to add: both are there
    assert sorted(t.issues[2].labels) == ["BUG", "Needs Info"]
    assert not any("set by hand" in c for c in result.changes)


def test_opt_out_and_pending_labels_with_other_casing_in_analyze(config, fake_engine):  # noqa: F811
    t = make_tracker()
    t.set_labels(2, ["Assistant: SKIP"])
    assert "opt-out" in run(t, config).skipped
    t.set_labels(2, ["Assistant: Pending"])
    fake_engine.enqueue(DECISION)
    result = run(t, config)
    assert result.action == "posted"
    assert [w[0] for w in t.writes] == ["create_comment"]  # the pending label is already there


def test_sweep_removes_the_pending_label_left_on_a_closed_duplicate(caplog):
    t = make_tracker()
    comment = post_plan(t, type="bug", duplicate=Duplicate(number=1))
    t.react(comment.id, "maria", "+1")
    t.fail_on["remove_label"] = GitHubError("DELETE", "/labels/x", 502, "Bad Gateway")
    with caplog.at_level(logging.INFO):
        [result] = approver(t).run()
    assert result.status == "failed"
    assert t.issues[2].state == "closed" and plan_of(t, comment).status == "approved"
    assert "stays pending" not in caplog.text
    assert "the next run removes the pending label" in caplog.text
    del t.fail_on["remove_label"]
    [result] = approver(t).run()  # the sweep lists closed issues with the label
    assert result.status == "skipped" and result.reason == "already approved"
    assert "assistant: pending" not in t.issues[2].labels
    assert approver(t).run() == []


def test_a_vote_during_reanalysis_keeps_the_text_it_approved(config, fake_engine):  # noqa: F811
    """The maintainer 👍s while the engine runs: the comment is not edited to a new plan."""
    t = make_tracker()
    comment = post_plan(t, type="bug")
    before = t.comment(comment.id).body

    def vote_meanwhile(context):
        t.react(comment.id, "maria", "+1")
        return DECISION.model_copy(update={"type": "feature"})

    fake_engine.enqueue(vote_meanwhile)
    result = run(t, config)
    assert result.skipped and "voted during the analysis" in result.skipped
    assert t.writes == [] and t.comment(comment.id).body == before
    [applied] = approver(t).run()
    assert applied.status == "approved"
    assert "bug" in t.issues[2].labels and "feature" not in t.issues[2].labels
