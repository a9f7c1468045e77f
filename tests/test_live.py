"""Live `analyze` on the in-memory tracker: skips, one comment posted or edited, writes modes."""

from __future__ import annotations

import pytest

from issue_assistant.comment import Outcome, extract_plan, render_comment
from issue_assistant.config.sections import IndexConfig
from issue_assistant.decision import Decision, Duplicate
from issue_assistant.errors import EngineError, UserError
from issue_assistant.live import analyze_live
from issue_assistant.tracker.memory import MemoryTracker
from issue_assistant.tracker.models import User
from tests.test_approve import CONFIG, LABELS, PENDING, make_tracker, post_plan

DECISION = Decision(
    type="bug",
    areas=["area: io"],
    duplicate=Duplicate(number=1, reason="same ArrowInvalid", confidence=0.8),
    questions=["Which version of pyarrow?"],
    summary="Reading parquet fails with ArrowInvalid.",
)


@pytest.fixture
def config(tmp_path):
    return CONFIG.model_copy(update={"index": IndexConfig(cache_dir=str(tmp_path / "cache"))})


def run(t: MemoryTracker, config, writes: str = "live", number: int = 2, **kw):
    return analyze_live(
        t.full_name,
        number,
        labels=LABELS,
        config=config,
        engine_name=None,
        writes=writes,
        tracker=t,
        now=t.now,
        **kw,
    )


def test_posts_one_comment_and_the_pending_label(config, fake_engine):
    t = make_tracker()
    fake_engine.enqueue(DECISION)
    moment = t.now
    result = run(t, config)
    assert result.skipped is None and result.action == "posted"
    assert [w[0] for w in t.writes] == ["create_comment", "add_labels"]
    assert t.writes[1] == ("add_labels", 2, [PENDING])
    [comment] = t.list_comments(2)
    assert comment.body == result.comment
    assert result.comment_url == comment.url
    plan = extract_plan(comment.body)
    assert plan.labels() == ["bug", "area: io"] and plan.duplicate.number == 1
    assert plan.labels_before == [] and plan.status == "pending"
    assert result.decision["type"] == "bug"
    assert '"type": "bug"' in result.decision_json
    # the engine saw the issue and its earlier neighbour, not itself
    [context] = fake_engine.history
    assert context.issue.number == 2 and context.as_of == moment
    assert [c.issue.number for c in context.candidates] == [1]


def test_rerun_edits_the_comment_instead_of_posting_again(config, fake_engine):
    t = make_tracker()
    fake_engine.enqueue(DECISION, DECISION.model_copy(update={"type": "feature"}))
    first = run(t, config)
    t.tick()
    second = run(t, config)
    assert second.action == "edited" and second.comment_url == first.comment_url
    assert [w[0] for w in t.writes] == ["create_comment", "add_labels", "edit_comment"]
    [comment] = t.list_comments(2)
    assert extract_plan(comment.body).type == "feature"


@pytest.mark.parametrize("status", ["approved", "dismissed"])
def test_rerun_never_edits_a_decided_comment(config, fake_engine, status):
    t = make_tracker()
    comment = post_plan(t, type="bug")
    outcome = Outcome(action=status, actor="maria", at=t.now)
    plan = extract_plan(t.comment(comment.id).body).model_copy(
        update={"status": status, "history": [outcome]}
    )
    t.comment(comment.id).body = render_comment(plan)
    result = run(t, config)
    assert result.skipped == f"the assistant's comment is already {status}"
    assert t.writes == [] and fake_engine.history == []


def test_rerun_leaves_a_voted_comment_to_apply(config, fake_engine):
    t = make_tracker()
    comment = post_plan(t, type="bug")
    t.react(comment.id, "maria", "+1")
    result = run(t, config)
    assert "already has votes" in result.skipped
    assert t.writes == []


@pytest.mark.parametrize("login", ["rita", "stranger", "github-actions[bot]"])
def test_a_vote_apply_ignores_does_not_freeze_the_proposal(config, fake_engine, login):
    """Issue 8 item 13: one vote rule; a drive-by 👍 or command counts for neither command."""
    t = make_tracker()
    comment = post_plan(t, type="bug")
    t.react(comment.id, login, "+1")
    t.add_comment(2, login, "/assistant approve")
    fake_engine.enqueue(DECISION)
    result = run(t, config)
    assert result.skipped is None and result.action == "edited"
    assert [w[0] for w in t.writes] == ["edit_comment"]


def test_forged_comment_does_not_stop_a_new_one(config, fake_engine):
    t = make_tracker()
    forged = post_plan(t, type="feature")
    t.comments[2][0] = t.comment(forged.id).model_copy(update={"user": User(login="mallory")})
    fake_engine.enqueue(DECISION)
    result = run(t, config)
    assert result.action == "posted"
    assert [w[0] for w in t.writes] == ["create_comment"]  # the pending label is already there


@pytest.mark.parametrize(
    ("setup", "reason"),
    [
        (dict(pull_request=True), "a pull request"),
        (dict(user="dependabot[bot]", user_type="Bot"), "opened by a bot (dependabot[bot])"),
        (dict(user="renovate", user_type="Bot"), "opened by a bot (renovate)"),
        (dict(labels=["assistant: skip"]), "has the opt-out label 'assistant: skip'"),
    ],
)
def test_skips(config, fake_engine, setup, reason):
    t = make_tracker()
    t.add_issue(7, "Something", **setup)
    result = run(t, config, number=7)
    assert result.skipped == reason
    assert t.writes == [] and fake_engine.history == []
    assert ("list_comments", 7) not in t.reads


@pytest.mark.parametrize("mode", ["dry-run", "off"])
def test_dry_run_and_off_write_nothing(config, fake_engine, mode, caplog):
    t = make_tracker()
    fake_engine.enqueue(DECISION)
    caplog.set_level("INFO")
    result = run(t, config, writes=mode)
    assert t.writes == []
    assert result.action == "would post" and result.comment_url is None
    assert result.done == ["post the assistant's comment on #2", f"add labels '{PENDING}' to #2"]
    would = [r.message for r in caplog.records if r.message.startswith("dry-run: would")]
    assert len(would) == (2 if mode == "dry-run" else 0)


def test_engine_failure_writes_nothing(config, fake_engine):
    t = make_tracker()
    fake_engine.enqueue(RuntimeError("model unavailable"))
    with pytest.raises(EngineError):
        run(t, config)
    assert t.writes == []


def test_empty_plan_posts_nothing(config, fake_engine):
    """Issue 17 item 1: nothing to propose, no comment and no pending label; the reason says
    so (the engine proposed nothing here: no label was on the issue already)."""
    t = make_tracker()
    result = run(t, config)  # the fake engine abstains
    assert result.plan.is_empty and t.writes == []
    assert result.action == "none" and result.comment_url is None
    assert result.skipped == "nothing to propose: no label proposed, no duplicate, no question"


def test_a_rerun_with_nothing_left_to_propose_updates_its_comment(config, fake_engine):
    """A pending comment already there is brought up to date (and its pending label removed)
    rather than left proposing what no longer applies."""
    t = make_tracker()
    fake_engine.enqueue(DECISION)
    run(t, config)
    t.tick()
    result = run(t, config)  # abstains now
    assert result.action == "edited" and result.skipped is None
    assert [w[0] for w in t.writes] == [
        "create_comment",
        "add_labels",
        "edit_comment",
        "remove_label",
    ]
    assert "Nothing to apply." in t.list_comments(2)[0].body


def test_index_is_refreshed_incrementally(config, fake_engine):
    t = make_tracker()
    run(t, config)
    first = [r for r in t.reads if r[0] == "all_issues"]
    t.tick(30)
    t.add_issue(3, "Parquet reading is slow")
    t.tick()
    run(t, config, number=3)
    second = [r for r in t.reads if r[0] == "all_issues"][len(first) :]
    assert first == [("all_issues", None)]
    assert second[0][1] is not None and second[0][1] < t.now


def test_missing_issue_is_a_user_error(config):
    with pytest.raises(UserError, match="no such issue"):
        run(make_tracker(), config, number=99)


def test_the_bot_login_comes_from_config(config, fake_engine):
    t = make_tracker()
    t.login = "triage-app[bot]"
    approval = config.approval.model_copy(update={"bot_login": "triage-app[bot]"})
    cfg = config.model_copy(update={"approval": approval})
    fake_engine.enqueue(DECISION, DECISION.model_copy(update={"type": "feature"}))
    run(t, cfg)
    assert run(t, cfg).action == "edited"
    assert [c.user.login for c in t.list_comments(2)] == ["triage-app[bot]"]
