"""Approval logic on the in-memory tracker: votes, trust, revalidation, ordering, idempotence."""

from __future__ import annotations

from pathlib import Path

import pytest

from issue_assistant.approve.assistant_comment import find_assistant_comment
from issue_assistant.approve.sweep import Approver
from issue_assistant.comment import MARKER, Plan, extract_plan, render_comment
from issue_assistant.config.labels import load_labels
from issue_assistant.config.sections import load_config
from issue_assistant.decision import Duplicate
from issue_assistant.errors import GitHubError, UserError
from issue_assistant.tracker.memory import MemoryTracker
from issue_assistant.tracker.models import Comment
from issue_assistant.votes import slash_command
from issue_assistant.writes import resolve_writes

DATA = Path(__file__).parent / "data" / "action"
LABELS = load_labels(DATA / "labels.toml")
CONFIG = load_config(DATA / "config.toml")
BOT = "github-actions[bot]"
PENDING = "assistant: pending"
ROLES = {"maria": "maintain", "tina": "triage", "wade": "write", "ada": "admin", "rita": "read"}


#: the repository's labels: those of labels.toml, the pending and the needs-info labels
REPO_LABELS = [*LABELS.all_names(), PENDING, *([LABELS.needs_info] if LABELS.needs_info else [])]


def make_tracker() -> MemoryTracker:
    t = MemoryTracker("octo/repo", roles=ROLES, labels=REPO_LABELS)
    t.add_issue(1, "Crash reading parquet files", "ArrowInvalid on read", user="alice")
    t.tick(60)
    t.add_issue(2, "Reading parquet crashes", "Traceback: ArrowInvalid", user="bob")
    return t


def post_plan(t: MemoryTracker, number: int = 2, **fields: object) -> Comment:
    """The assistant's pending comment with a plan, as `analyze` leaves it."""
    issue = t.issues[number]
    fields.setdefault("labels_before", list(issue.labels))
    plan = Plan(
        repository=t.full_name,
        issue=number,
        reporter=issue.user.login,
        created_at=t.now,
        engine="fake",
        **fields,  # type: ignore[arg-type]
    )
    comment = t.add_comment(number, BOT, render_comment(plan), user_type="Bot")
    t.set_labels(number, [*issue.labels, PENDING])
    return comment


def approver(t: MemoryTracker, writes: str = "live", config=CONFIG, labels=LABELS) -> Approver:
    return Approver(t, labels, config, writes=writes, now=t.now)  # type: ignore[arg-type]


def plan_of(t: MemoryTracker, comment: Comment) -> Plan:
    plan = extract_plan(t.comment(comment.id).body)  # type: ignore[arg-type]
    assert plan is not None
    return plan


# ---- MemoryTracker ---------------------------------------------------------------------------


def test_memory_tracker_records_writes_and_behaves_like_github():
    t = make_tracker()
    t.add_labels(2, ["bug", "bug"])
    assert t.issues[2].labels == ["bug"]
    c = t.create_comment(2, "hello")
    assert c.user.login == BOT and c.url.endswith(f"#issuecomment-{c.id}")
    t.edit_comment(c.id, "bye")
    assert t.list_comments(2)[-1].body == "bye"
    with pytest.raises(GitHubError) as err:
        t.remove_label(2, "nope")
    assert err.value.status == 404
    t.close(2, "duplicate")
    assert t.issues[2].state == "closed" and t.issues[2].state_reason == "duplicate"
    assert [w[0] for w in t.writes] == ["add_labels", "create_comment", "edit_comment", "close"]
    assert t.permission("maria") == "maintain" and t.permission("nobody") == "none"
    with pytest.raises(KeyError):
        t.get_issue(99)
    assert [i.number for i in t.all_issues(since=t.issues[2].created_at)] == [2]
    t.fail_on["add_labels"] = GitHubError("POST", "/labels", 403, "Forbidden")
    with pytest.raises(GitHubError):
        t.add_labels(2, ["x"])


def test_issues_with_label_by_state():
    t = make_tracker()
    t.add_issue(3, "A PR", pull_request=True, labels=[PENDING])
    t.add_issue(4, "Closed", state="closed", labels=[PENDING])
    post_plan(t)
    assert [i.number for i in t.issues_with_label(PENDING)] == [2]
    assert [i.number for i in t.issues_with_label(PENDING, state="closed")] == [4]
    assert [i.number for i in t.issues_with_label(PENDING, state="all")] == [2, 4]


# ---- helpers ---------------------------------------------------------------------------------


def test_slash_command_only_at_line_start():
    assert slash_command("/assistant approve") == "approve"
    assert slash_command("thanks!\n  /Assistant DISMISS please") == "dismiss"
    assert slash_command("> /assistant approve") is None
    assert slash_command("reply `/assistant approve` to apply") is None
    assert slash_command("/assistant approved-ish") is None
    assert slash_command(None) is None


def test_resolve_writes_precedence():
    assert resolve_writes(None, CONFIG, in_actions=True) == "live"
    assert resolve_writes(None, CONFIG, in_actions=False) == "dry-run"
    off = CONFIG.approval.model_copy(update={"writes": "off"})
    cfg = CONFIG.model_copy(update={"approval": off})
    assert resolve_writes(None, cfg, in_actions=True) == "off"
    assert resolve_writes("live", cfg, in_actions=False) == "live"
    with pytest.raises(UserError):
        resolve_writes("sometimes", CONFIG, in_actions=True)


# ---- votes -----------------------------------------------------------------------------------


def test_maintainer_thumbs_up_applies():
    t = make_tracker()
    comment = post_plan(t, type="bug", areas=["area: io"], priority="p2")
    t.react(comment.id, "maria", "+1")
    [result] = approver(t).run()
    assert result.status == "approved" and result.actor == "maria"
    assert t.issues[2].labels == ["bug", "area: io", "p2"]
    plan = plan_of(t, comment)
    assert plan.status == "approved"
    assert plan.history[-1].actor == "maria"
    assert "labeled `bug`, `area: io`, `p2`" in plan.history[-1].changes
    body = t.comment(comment.id).body
    assert "Approved by `maria`" in body and "<details><summary>The proposal" in body
    # the comment is edited only after the labels, and the pending label goes last
    assert [w[0] for w in t.writes] == ["add_labels", "edit_comment", "remove_label"]


@pytest.mark.parametrize("login", ["rita", "stranger", "bob", BOT])
def test_thumbs_up_from_someone_without_a_role_does_nothing(login):
    """Nothing is applied; the comment only says the vote did not count (the bot's own, never)."""
    t = make_tracker()
    comment = post_plan(t, type="bug")
    t.react(comment.id, login, "+1")
    [result] = approver(t).run()
    assert result.status == "waiting"
    assert [w[0] for w in t.writes] == ([] if login == BOT else ["edit_comment"])
    assert plan_of(t, comment).status == "pending" and PENDING in t.issues[2].labels
    said = f"Not counted: a 👍 from `{login}` (no triage role)."
    assert (said in t.comment(comment.id).body) == (login != BOT)


def test_roles_are_looked_up_once_per_login():
    t = make_tracker()
    for n in (2, 3):
        if n == 3:
            t.add_issue(3, "Another")
        c = post_plan(t, n, type="bug")
        t.react(c.id, "rita", "+1")
        t.react(c.id, "rita", "heart")
    approver(t).run()
    assert t.reads.count(("permission", "rita")) == 1


def test_thumbs_down_dismisses_and_writes_nothing_else():
    t = make_tracker()
    comment = post_plan(t, type="bug", questions=["Which version?"])
    t.react(comment.id, "tina", "-1")
    [result] = approver(t).run()
    assert result.status == "dismissed"
    assert [w[0] for w in t.writes] == ["edit_comment", "remove_label"]
    assert t.issues[2].labels == []
    body = t.comment(comment.id).body
    assert "Dismissed by `tina`" in body and "<details>" in body
    assert plan_of(t, comment).status == "dismissed"


def test_slash_approve_by_maintainer_applies():
    t = make_tracker()
    comment = post_plan(t, type="feature")
    t.add_comment(2, "rita", "/assistant approve")  # no role: ignored
    t.add_comment(2, "wade", "Looks right.\n/assistant approve")
    [result] = approver(t).run()
    assert result.status == "approved" and result.actor == "wade"
    assert "feature" in t.issues[2].labels
    assert plan_of(t, comment).history[-1].actor == "wade"


def test_slash_command_before_the_comment_does_not_count():
    t = make_tracker()
    t.add_comment(2, "maria", "/assistant approve")
    post_plan(t, type="bug")
    [result] = approver(t).run()
    assert result.status == "waiting" and t.writes == []


def test_earliest_maintainer_vote_wins():
    t = make_tracker()
    comment = post_plan(t, type="bug")
    t.add_comment(2, "maria", "/assistant dismiss")
    t.react(comment.id, "ada", "+1")
    [result] = approver(t).run()
    assert result.status == "dismissed" and result.actor == "maria"


# ---- trust -----------------------------------------------------------------------------------


def test_forged_marker_in_another_users_comment_is_ignored():
    t = make_tracker()
    forged_plan = Plan(
        repository=t.full_name,
        issue=2,
        reporter="bob",
        created_at=t.now,
        type="feature",
        priority="p1",
    )
    forged = t.add_comment(2, "mallory", render_comment(forged_plan))
    t.set_labels(2, [PENDING])
    t.react(forged.id, "maria", "+1")
    t.add_comment(2, "maria", "/assistant approve")
    [result] = approver(t).run()
    assert result.status == "skipped" and "no comment with a plan" in result.reason
    assert t.writes == []
    # with the real comment present, only its plan is applied
    real = post_plan(t, type="bug")
    t.react(real.id, "maria", "+1")
    [result] = approver(t).run()
    assert result.status == "approved"
    assert "feature" not in t.issues[2].labels and "p1" not in t.issues[2].labels
    assert "bug" in t.issues[2].labels


def test_plan_for_another_issue_is_not_trusted():
    t = make_tracker()
    plan = Plan(repository=t.full_name, issue=1, reporter="alice", created_at=t.now, type="bug")
    t.add_comment(2, BOT, render_comment(plan), user_type="Bot")
    comments = t.list_comments(2)
    assert find_assistant_comment(comments, BOT, t.full_name, 2) is None
    assert find_assistant_comment(comments, BOT, "octo/other", 1) is None
    assert MARKER in comments[0].body


# ---- revalidation and human decisions ---------------------------------------------------------


def test_label_no_longer_in_labels_toml_is_dropped():
    t = make_tracker()
    comment = post_plan(t, type="bug", areas=["area: io", "area: gone", "area: legacy"])
    t.react(comment.id, "maria", "+1")
    [result] = approver(t).run()
    assert t.issues[2].labels == ["bug", "area: io"]
    assert any("dropped `area: gone`, `area: legacy`" in c for c in result.changes)


def test_a_label_the_repository_lacks_is_left_out_not_created():
    """labels.toml names it, but approving it would make GitHub create the label: a write
    nobody approved. It is left out and the record says so; the others are applied."""
    t = make_tracker()
    t.label_names = [n for n in REPO_LABELS if n != "p2"]
    comment = post_plan(t, type="bug", areas=["area: io"], priority="p2")
    t.react(comment.id, "maria", "+1")
    [result] = approver(t).run()
    assert result.status == "approved" and t.issues[2].labels == ["bug", "area: io"]
    assert ("add_labels", 2, ["bug", "area: io"]) in t.writes
    assert "left out `p2`: not a label of this repository" in result.changes
    assert "labeled `bug`, `area: io`" in plan_of(t, comment).history[-1].changes


def test_group_limit_of_current_labels_toml_applies():
    t = make_tracker()
    labels = LABELS.model_copy(update={"max_areas": 1})
    comment = post_plan(t, areas=["area: io", "area: docs"])
    t.react(comment.id, "maria", "+1")
    approver(t, labels=labels).run()
    assert t.issues[2].labels == ["area: io"]


def test_human_label_set_after_the_comment_is_kept():
    t = make_tracker()
    comment = post_plan(t, type="bug", areas=["area: io"])
    t.set_labels(2, [*t.issues[2].labels, "feature"])  # a maintainer decides the type by hand
    t.react(comment.id, "maria", "+1")
    [result] = approver(t).run()
    labels = t.issues[2].labels
    assert "feature" in labels and "bug" not in labels and "area: io" in labels
    assert any("kept the type labels set by hand (`feature`)" in c for c in result.changes)


def test_human_label_removed_after_the_comment_keeps_the_group():
    t = make_tracker()
    t.set_labels(2, ["area: docs"])
    comment = post_plan(t, areas=["area: io"])
    t.set_labels(2, [PENDING])  # a maintainer removed area: docs
    t.react(comment.id, "maria", "+1")
    approver(t).run()
    assert t.issues[2].labels == []


def test_type_already_set_before_the_comment_is_not_doubled():
    t = make_tracker()
    t.set_labels(2, ["feature"])  # e.g. from the issue template
    comment = post_plan(t, type="bug", areas=["area: io"])
    t.react(comment.id, "maria", "+1")
    approver(t).run()
    assert sorted(t.issues[2].labels) == ["area: io", "feature"]


# ---- duplicates and questions -----------------------------------------------------------------


def test_duplicate_posts_once_and_closes():
    t = make_tracker()
    comment = post_plan(t, type="bug", duplicate=Duplicate(number=1, confidence=0.9))
    t.react(comment.id, "maria", "+1")
    [result] = approver(t).run()
    assert result.status == "approved"
    bodies = [w[2] for w in t.writes if w[0] == "create_comment"]
    assert bodies == ["Duplicate of #1"]
    assert t.issues[2].state == "closed" and t.issues[2].state_reason == "duplicate"
    assert [w[0] for w in t.writes] == [
        "add_labels",
        "create_comment",
        "close",
        "edit_comment",
        "remove_label",
    ]


def test_duplicate_without_close_and_questions():
    t = make_tracker()
    config = CONFIG.model_copy(
        update={"duplicates": CONFIG.duplicates.model_copy(update={"close": False})}
    )
    comment = post_plan(t, duplicate=Duplicate(number=1), questions=["Which version of pyarrow?"])
    t.react(comment.id, "maria", "+1")
    approver(t, config=config).run()
    # one new comment, the duplicate's; the questions stay in view in the approved comment
    posted = [w[2] for w in t.writes if w[0] == "create_comment"]
    assert posted == ["Duplicate of #1"]
    assert t.issues[2].state == "open"
    assert "needs info" in t.issues[2].labels
    body = t.list_comments(2)[0].body
    visible = body.split("<details><summary>The proposal</summary>")[0]
    assert "Approved by `maria`" in visible and "asked the reporter 1 question(s)" in visible
    assert "@bob, could you tell us:\n\n- Which version of pyarrow?\n" in visible
    assert body.count("Which version of pyarrow?") == 2  # the comment's text, and its plan


def test_questions_closed_as_a_duplicate_are_not_asked():
    t = make_tracker()
    comment = post_plan(t, duplicate=Duplicate(number=1), questions=["Which version of pyarrow?"])
    t.react(comment.id, "maria", "+1")
    [result] = approver(t).run()
    assert [w[2] for w in t.writes if w[0] == "create_comment"] == ["Duplicate of #1"]
    assert "needs info" not in t.issues[2].labels
    assert not any("question" in c for c in result.changes)
    body = t.list_comments(2)[0].body
    visible = body.split("<details><summary>The proposal</summary>")[0]
    assert "Which version" not in visible and "@bob" not in visible
    assert extract_plan(body).history[-1].asked is False


def test_duplicate_that_is_now_a_pull_request_is_dropped():
    t = make_tracker()
    t.add_issue(5, "A PR", pull_request=True)
    comment = post_plan(t, duplicate=Duplicate(number=5))
    t.react(comment.id, "maria", "+1")
    [result] = approver(t).run()
    assert t.issues[2].state == "open"
    assert not [w for w in t.writes if w[0] == "create_comment"]
    assert any("dropped the duplicate #5" in c for c in result.changes)


# ---- idempotence, failures, dry-run ------------------------------------------------------------


def test_apply_twice_writes_nothing_the_second_time():
    t = make_tracker()
    comment = post_plan(t, type="bug", questions=["Which version?"])
    t.react(comment.id, "maria", "+1")
    approver(t).run()
    writes = list(t.writes)
    assert approver(t).run() == []  # the pending label is gone
    assert approver(t).run([2])[0].status == "skipped"
    assert t.writes == writes


def test_failure_midway_leaves_pending_and_a_rerun_completes():
    t = make_tracker()
    comment = post_plan(t, type="bug", duplicate=Duplicate(number=1))
    t.react(comment.id, "maria", "+1")
    t.fail_on["close"] = GitHubError("PATCH", "/repos/octo/repo/issues/2", 403, "Forbidden")
    [result] = approver(t).run()
    assert result.status == "failed" and "403" in result.reason
    assert plan_of(t, comment).status == "pending"
    assert PENDING in t.issues[2].labels
    del t.fail_on["close"]
    [result] = approver(t).run()
    assert result.status == "approved"
    kinds = [w[0] for w in t.writes]
    assert kinds.count("create_comment") == 1 and kinds.count("add_labels") == 1
    assert t.issues[2].state == "closed"
    assert "closed as a duplicate" in plan_of(t, comment).history[-1].changes


@pytest.mark.parametrize("status", [403, 404, 422])
def test_github_error_on_labels_writes_nothing_more(status):
    t = make_tracker()
    comment = post_plan(t, type="bug")
    t.react(comment.id, "maria", "+1")
    t.fail_on["add_labels"] = GitHubError("POST", "/labels", status, "no")
    [result] = approver(t).run()
    assert result.status == "failed"
    assert t.writes == []
    assert plan_of(t, comment).status == "pending"


def test_approved_comment_with_pending_label_left_only_loses_the_label():
    t = make_tracker()
    comment = post_plan(t, type="bug")
    t.react(comment.id, "maria", "+1")
    t.fail_on["remove_label"] = GitHubError("DELETE", "/labels/x", 500, "boom")
    [result] = approver(t).run()
    assert result.status == "failed" and plan_of(t, comment).status == "approved"
    del t.fail_on["remove_label"]
    [result] = approver(t).run()
    assert result.status == "skipped"
    assert result.writes == ["remove label 'assistant: pending' from #2"]
    assert PENDING not in t.issues[2].labels


@pytest.mark.parametrize("mode", ["dry-run", "off"])
def test_dry_run_and_off_write_nothing(mode):
    t = make_tracker()
    comment = post_plan(t, type="bug", duplicate=Duplicate(number=1), questions=["Which?"])
    t.react(comment.id, "maria", "+1")
    [result] = approver(t, writes=mode).run()
    assert t.writes == []
    assert result.status == "approved"
    assert result.writes[0] == "add labels 'bug' to #2"
    assert any(w.startswith("close #2") for w in result.writes)
    assert plan_of(t, comment).status == "pending"


def test_a_rerun_finishes_an_approval_that_closed_the_issue():
    t = make_tracker()
    comment = post_plan(t, type="bug", duplicate=Duplicate(number=1))
    t.react(comment.id, "maria", "+1")
    t.fail_on["edit_comment"] = GitHubError("PATCH", "/comments/1", 502, "Bad Gateway")
    [result] = approver(t).run()
    assert result.status == "failed" and t.issues[2].state == "closed"
    del t.fail_on["edit_comment"]
    [result] = approver(t).run()  # the next scheduled sweep lists closed issues too
    assert result.status == "approved"
    kinds = [w[0] for w in t.writes]
    assert kinds == ["add_labels", "create_comment", "close", "edit_comment", "remove_label"]
    assert approver(t).run() == []  # done: the pending label is gone


def test_sweep_passes_over_closed_issues_without_a_request():
    t = make_tracker()
    comment = post_plan(t, type="bug")
    t.react(comment.id, "maria", "+1")
    t.close(2, "completed")  # a maintainer closed it without going through the proposal
    t.reads.clear()
    writes = len(t.writes)
    [result] = approver(t).run()
    assert result.status == "skipped" and result.reason == "the issue is closed"
    assert [r[0] for r in t.reads] == ["issues_with_label"]  # no comment or reaction read
    assert len(t.writes) == writes


def test_closed_issue_is_skipped_and_a_missing_one_is_a_user_error():
    """Issue 17: `apply --issue 99999` exits 2, as analyze does for the same mistake."""
    t = make_tracker()
    post_plan(t, type="bug")
    t.close(2, "completed")
    results = approver(t).run([2])
    assert [r.status for r in results] == ["skipped"]
    before = list(t.writes)
    with pytest.raises(UserError, match=r"octo/repo#42: no such issue \(no access, or private\?"):
        approver(t).run([2, 42])
    assert t.writes == before  # nothing was done for #2 either
