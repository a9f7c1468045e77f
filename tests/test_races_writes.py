"""Wrong and doubled writes from races (issue 16): the same-second vote, two `analyze` runs at
once, and `apply` racing a person's label edit. Against the fake GitHub, the real client.

Each test records what it measured for `docs/reliability.md` (`python -m tests.reliability`).
"""

from __future__ import annotations

import threading
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from issue_assistant import action
from issue_assistant.approve.sweep import Approver
from issue_assistant.comment import extract_plan, render_comment
from tests.fakegithub import FakeGitHub
from tests.fakegithub.fixtures import TOKEN
from tests.test_action import BOT, DECISION, PENDING, REPO, environment, event, seed
from tests.test_approve import CONFIG, LABELS
from tests.test_races_faults import record, run_analyze, run_apply, state_of, tracker

PROPERTY = "reliability"  # what each case records for tests/reliability.py


@pytest.fixture
def gh():
    with FakeGitHub(REPO, token=TOKEN) as server:
        seed(server)
        yield server


def bot_comments(gh: FakeGitHub, number: int = 3) -> list[Any]:
    return [c for c in gh.comments.values() if c.user == BOT and c.issue == number]


def reanalyze(gh: FakeGitHub, tmp_path: Path, fake_engine, **update: Any) -> int:
    fake_engine.enqueue(DECISION.model_copy(update=update))
    env = environment(tmp_path, "analyze", "issues", event(tmp_path, "issues/opened.payload.json"))
    return action.main(env, tracker=tracker(gh))


# ---- a vote in the same second as an edit --------------------------------------------------


def test_a_vote_in_the_same_second_as_the_reanalysis_edit_counts_for_neither_text(
    gh, tmp_path, capsys, record_property, fake_engine
):
    """GitHub's times have one-second resolution: a 👍 given in the second of the bot's edit
    may have been meant for the old text. It is set aside, the comment asks again, and the
    plan is applied only after a vote on the new text."""
    assert run_analyze(gh, tmp_path, capsys, fake_engine)[0] == 0
    [comment] = bot_comments(gh)
    gh.step = timedelta(0)  # everything from here on happens in one second
    gh.before(
        "PATCH",
        rf"/issues/comments/{comment.id}$",
        lambda: gh.add_reaction(comment.id, "maria", "+1"),
    )
    assert reanalyze(gh, tmp_path, fake_engine, priority="p1") == 0
    err = capsys.readouterr().err
    plan = extract_plan(comment.body)
    assert plan.priority == "p1"
    assert "Please vote again" in comment.body and "`maria`" in comment.body
    assert [v.actor for v in plan.set_aside] == ["maria"]
    assert "set aside" in err
    status, _ = run_apply(gh, tmp_path, capsys)
    wrong = int(extract_plan(comment.body).status != "pending") + int("p1" in gh.issues[3].labels)
    gh.step = timedelta(minutes=1)
    gh.clock += gh.step
    gh.add_comment(3, "/assistant approve", "maria")  # a vote on the text now shown
    assert run_apply(gh, tmp_path, capsys)[0] == 0
    done = extract_plan(comment.body)
    wrong += int(done.status != "approved" or "p1" not in gh.issues[3].labels)
    what = {"kind": "vote in the edit's second", "where": "analyze then apply"}
    record(record_property, "race", wrong, state_of(gh).doubled(), 0, **what)
    assert status == 0 and wrong == 0
    assert done.set_aside == [] and "Please vote again" not in comment.body


def test_a_vote_in_the_same_second_as_a_persons_edit_does_not_approve_it(
    gh, tmp_path, capsys, record_property, fake_engine
):
    """A user with write access (not an approver) edits the plan in the second of a
    maintainer's 👍: the vote was for the earlier text, so nothing is applied."""
    assert run_analyze(gh, tmp_path, capsys, fake_engine)[0] == 0
    [comment] = bot_comments(gh)
    gh.set_permission("wendy", "write")
    gh.step = timedelta(0)
    gh.add_reaction(comment.id, "maria", "+1")
    edited = extract_plan(comment.body).model_copy(update={"priority": "p1"})
    comment.body, comment.updated_at = render_comment(edited), gh.now()  # wendy's edit
    gh.step = timedelta(minutes=1)
    gh.clock += gh.step
    status, _ = run_apply(gh, tmp_path, capsys)
    plan = extract_plan(comment.body)
    wrong = int(plan.status != "pending") + int("p1" in gh.issues[3].labels)
    what = {"kind": "vote in the edit's second", "where": "a person's edit then apply"}
    record(record_property, "race", wrong, state_of(gh).doubled(), 0, **what)
    assert status == 0 and wrong == 0


def test_a_vote_a_second_after_the_edit_counts(gh, tmp_path, capsys, fake_engine):
    assert run_analyze(gh, tmp_path, capsys, fake_engine)[0] == 0
    [comment] = bot_comments(gh)
    assert reanalyze(gh, tmp_path, fake_engine, priority="p1") == 0
    gh.add_reaction(comment.id, "maria", "+1")  # the clock moved on: after the edit
    assert run_apply(gh, tmp_path, capsys)[0] == 0
    assert extract_plan(comment.body).status == "approved" and "p1" in gh.issues[3].labels
    assert "Please vote again" not in comment.body


# ---- the comment's line about votes that did not count -------------------------------------


def test_a_vote_just_before_the_not_counted_edit_leaves_the_comment_to_apply(
    gh, tmp_path, capsys, fake_engine
):
    """`apply` is about to say that rita's 👍 did not count when maria votes: the votes read
    again under the claim find hers, so the comment is not edited (an edit would set her vote
    aside), and the next run approves."""
    assert run_analyze(gh, tmp_path, capsys, fake_engine)[0] == 0
    [comment] = bot_comments(gh)
    before = comment.body
    gh.add_reaction(comment.id, "rita", "+1")
    gh.before(
        "POST",
        rf"/issues/comments/{comment.id}/reactions$",  # the claim, right before the edit
        lambda: gh.add_reaction(comment.id, "maria", "+1"),
    )
    gh.clear_requests()
    assert run_apply(gh, tmp_path, capsys)[0] == 0
    assert not [w for w in gh.issue_writes if w[0] == "PATCH"] and comment.body == before
    assert run_apply(gh, tmp_path, capsys)[0] == 0
    plan = extract_plan(comment.body)
    assert plan.status == "approved" and plan.history[-1].actor == "maria"


def test_a_vote_in_the_second_of_the_not_counted_edit_is_asked_again(
    gh, tmp_path, capsys, fake_engine
):
    """maria's 👍 comes in the very second `apply` edits the comment to say rita's did not
    count: it counts for neither text, so the comment, read again after the edit, asks her to
    vote again (one more edit), and a run after that edits nothing."""
    assert run_analyze(gh, tmp_path, capsys, fake_engine)[0] == 0
    [comment] = bot_comments(gh)
    gh.add_reaction(comment.id, "rita", "+1")
    gh.step = timedelta(0)
    gh.before(
        "PATCH",
        rf"/issues/comments/{comment.id}$",
        lambda: gh.add_reaction(comment.id, "maria", "+1"),
    )
    gh.clear_requests()
    assert run_apply(gh, tmp_path, capsys)[0] == 0
    assert len([w for w in gh.issue_writes if w[0] == "PATCH"]) == 2
    plan = extract_plan(comment.body)
    assert plan.status == "pending" and "p2" not in gh.issues[3].labels
    assert [(v.actor, v.why) for v in plan.not_counted] == [("rita", "role"), ("maria", "earlier")]
    assert (
        "Not counted: a 👍 from `rita` (no triage role); a 👍 from `maria` (given before this "
        "proposal was last changed: please vote again)."
    ) in comment.body
    gh.step = timedelta(minutes=1)
    gh.clock += gh.step
    gh.clear_requests()
    assert run_apply(gh, tmp_path, capsys)[0] == 0
    assert gh.writes == []
    gh.add_comment(3, "/assistant approve", "maria")  # a vote on the text now shown
    assert run_apply(gh, tmp_path, capsys)[0] == 0
    assert extract_plan(comment.body).status == "approved" and "p2" in gh.issues[3].labels


# ---- two analyze runs at once --------------------------------------------------------------


@pytest.mark.parametrize("lag", [0.0, 0.3])
def test_two_analyze_runs_at_once_post_one_comment_and_one_label(
    gh, tmp_path, record_property, fake_engine, lag
):
    """No concurrency group: two runs (own workspaces, as on two runners) start together, and
    with `lag` both read "no comment yet" before either posts."""
    if lag:
        gh.fail_next("GET", r"/issues/3/comments$", 0, apply=True, delay=lag, times=2)
    fake_engine.enqueue(DECISION, DECISION)
    barrier = threading.Barrier(2)
    statuses: list[int] = []
    errors: list[BaseException] = []

    def one(where: Path) -> None:
        where.mkdir()
        env = environment(where, "analyze", "issues", event(where, "issues/opened.payload.json"))
        try:
            barrier.wait()
            statuses.append(action.main(env, tracker=tracker(gh)))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=one, args=(tmp_path / n,)) for n in "ab"]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    posts = [w for w in gh.issue_writes if w[0] == "POST" and w[1].endswith("/3/comments")]
    label_posts = [w for w in gh.issue_writes if w[0] == "POST" and w[1].endswith("/3/labels")]
    kept = bot_comments(gh)
    doubled = max(len(kept) - 1, 0) + max(len(label_posts) - 1, 0)
    what = {"kind": "two analyze runs at once", "where": f"analyze (lag {lag} s)"}
    record(record_property, "race", 0, doubled, len(errors), **what)
    assert not errors and statuses == [0, 0]
    assert len(kept) == 1 and len(label_posts) == 1, (posts, label_posts)
    assert gh.issues[3].labels.count(PENDING) == 1
    if lag:  # both posted: the newer comment was deleted by its own run
        assert len(posts) == 2
        deletes = [w for w in gh.issue_writes if w[0] == "DELETE" and "/comments/" in w[1]]
        assert len(deletes) == 1 and str(kept[0].id) not in deletes[0][1]
    # a later run edits that one comment, and adds nothing
    gh.clear_requests()
    where = tmp_path / "c"
    where.mkdir()
    assert reanalyze(gh, where, fake_engine, priority="p1") == 0
    assert len(bot_comments(gh)) == 1 and not any(w[0] == "POST" for w in gh.issue_writes)


# ---- apply racing a person's label edit ----------------------------------------------------


def _seed_typed_vote(gh: FakeGitHub, tmp_path: Path, capsys, fake_engine) -> int:
    gh.issues[3].labels = []
    gh.add_label("bug")
    assert run_analyze(gh, tmp_path, capsys, fake_engine)[0] == 0
    [comment] = bot_comments(gh)
    gh.add_reaction(comment.id, "maria", "+1")
    return comment.id


@pytest.mark.parametrize("when", ["before the label write", "with the label write"])
def test_apply_leaves_a_type_a_person_set_meanwhile(
    gh, tmp_path, capsys, record_property, fake_engine, when
):
    """A person sets the type between apply's read and its label write (or at the same time):
    the issue ends with the person's type only, and the reply says so."""
    fake_engine.enqueue(DECISION.model_copy(update={"type": "feature"}))
    cid = _seed_typed_vote(gh, tmp_path, capsys, fake_engine)
    assert extract_plan(gh.comments[cid].body).type == "feature"

    def person() -> None:
        gh.issues[3].labels.append("bug")

    if when == "before the label write":
        gh.before("POST", r"/issues/3/labels$", person)
    else:  # the person's change lands right after our write, before anything else is read
        gh.before("POST", r"/issues/3/labels$", lambda: gh.before("GET", r"/issues/3$", person))
    results = Approver(tracker(gh), LABELS, CONFIG, writes="live", now=gh.clock).run()
    [result] = results
    types = [n for n in gh.issues[3].labels if n in ("bug", "feature")]
    wrong = int(types != ["bug"])
    what = {"kind": "a person sets the type meanwhile", "where": f"apply ({when})"}
    record(record_property, "race", wrong, state_of(gh).doubled(), 0, **what)
    assert result.status == "approved", result
    assert types == ["bug"], gh.issues[3].labels
    assert any("kept the type labels set by hand" in c for c in result.changes), result.changes
    assert "kept the type" in gh.comments[cid].body
