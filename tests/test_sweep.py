"""The approval sweep never stops at one issue (issue 16): a plan edited by hand until it cannot
be re-rendered under GitHub's limit, or any error on one issue, is reported for that issue with
exactly what was written, and the sweep goes on. Recorded for `docs/reliability.md`.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from issue_assistant import comment as cm
from issue_assistant.approve.sweep import Approver
from issue_assistant.comment import (
    GITHUB_LIMIT,
    Outcome,
    Plan,
    extract_plan,
    render_comment,
)
from tests.fakegithub import FakeGitHub
from tests.fakegithub.fixtures import TOKEN
from tests.test_action import BOT, NOW, PENDING, REPO, seed
from tests.test_approve import CONFIG, LABELS
from tests.test_races_faults import record, tracker

PROPERTY = "reliability"  # what each case records for tests/reliability.py


@pytest.fixture
def gh():
    with FakeGitHub(REPO, token=TOKEN) as server:
        seed(server)
        server.add_issue("Another one", "The docs are wrong.", "octocat", number=4)
        yield server


def pending(gh: FakeGitHub, number: int, **extra) -> int:
    plan = Plan(
        repository=REPO,
        issue=number,
        reporter="octocat",
        created_at=NOW,
        areas=["area: docs"],
        priority="p2",
        engine="fake",
        **extra,
    )
    body = render_comment(plan) if not extra else None
    if body is None:  # a hand-edited plan: written as is, whatever its size
        from issue_assistant.comment import MARKER, encode_plan

        body = f"{MARKER}\nedited\n<!-- issue-assistant:plan {encode_plan(plan)} -->"
    comment = gh.add_comment(number, body, BOT)
    gh.issues[number].labels.append(PENDING)
    gh.add_reaction(comment, "maria", "+1")
    return comment


def huge_history() -> dict:
    outcome = Outcome(action="dismissed", actor="maria", at=NOW, changes=["x" * 300] * 20)
    return {"history": [outcome] * 3}


HUGE = {
    "labels kept by hand": lambda: {
        "labels_before": [f"label {i:05d} " + "y" * 40 for i in range(1200)]
    },
}


@pytest.mark.parametrize("how", list(HUGE))
def test_a_plan_too_long_to_record_is_reported_and_the_sweep_goes_on(gh, record_property, how):
    big = pending(gh, 3, **HUGE[how]())
    assert len(gh.comments[big].body) > GITHUB_LIMIT - 5000  # near GitHub's limit
    other = pending(gh, 4)
    results = {
        r.number: r
        for r in Approver(tracker(gh), LABELS, CONFIG, writes="live", now=gh.clock).run()
    }
    wrong = int("p2" in gh.issues[3].labels) + int(
        extract_plan(gh.comments[big].body).status != "pending"
    )
    what = {"kind": how, "where": "apply sweep"}
    record(record_property, "sweep", wrong, 0, 0, **what)
    assert set(results) == {3, 4}
    assert results[3].status == "skipped" and "too long" in results[3].reason
    assert "nothing was written" in results[3].reason and results[3].writes == []
    assert wrong == 0 and gh.issues[3].labels == ["bug", PENDING]
    assert results[4].status == "approved" and "p2" in gh.issues[4].labels
    assert extract_plan(gh.comments[other].body).status == "approved"


def test_history_is_bounded():
    outcome = Outcome(action="dismissed", actor="m", at=NOW, changes=["c"] * 100)
    plan = Plan(repository=REPO, issue=3, reporter="r", created_at=NOW, history=[outcome] * 50)
    assert len(plan.history) == cm.HISTORY_MAX and len(plan.history[0].changes) == 20
    big = Plan(repository=REPO, issue=3, reporter="r", created_at=NOW, **huge_history())
    assert len(render_comment(big)) < GITHUB_LIMIT


@pytest.mark.parametrize("error", [ValueError("odd answer"), KeyError("content"), RecursionError()])
def test_any_error_on_one_issue_is_reported_and_the_sweep_goes_on(gh, record_property, error):
    pending(gh, 3)
    pending(gh, 4)
    t = tracker(gh)
    reactions = t.comment_reactions
    first = min(c.id for c in gh.comments.values() if c.issue == 3)

    def failing(comment_id: int):
        if comment_id == first:
            raise error
        return reactions(comment_id)

    t.comment_reactions = failing  # type: ignore[method-assign]
    tracebacks = 0
    try:
        results = {
            r.number: r for r in Approver(t, LABELS, CONFIG, writes="live", now=gh.clock).run()
        }
    except BaseException:  # noqa: BLE001 - what is measured
        tracebacks, results = 1, {}
    record(
        record_property, "sweep", 0, 0, tracebacks, kind=type(error).__name__, where="apply sweep"
    )
    assert tracebacks == 0
    assert results[3].status == "failed" and "nothing was written" in results[3].reason
    assert results[4].status == "approved"


def test_a_failure_after_a_write_says_exactly_what_was_written(gh, monkeypatch):
    comment = pending(gh, 3)
    t = tracker(gh)
    monkeypatch.setattr(
        "issue_assistant.approve.sweep.render_comment",
        _fail_on_approved(monkeypatch),
    )
    [result] = Approver(t, LABELS, CONFIG, writes="live", now=gh.clock).run([3])
    assert result.status == "failed"
    assert "written before it: add labels 'area: docs', 'p2' to #3" in result.reason
    assert result.writes == ["add labels 'area: docs', 'p2' to #3"]
    assert extract_plan(gh.comments[comment].body).status == "pending"
    gh.clock += timedelta(minutes=5)


def _fail_on_approved(monkeypatch):
    from issue_assistant import comment as module

    real = module.render_comment
    calls = {"n": 0}

    def render(plan, fallback_from=None):
        calls["n"] += 1
        if calls["n"] > 1 and plan.status == "approved":  # the pre-flight passes, the write not
            raise RuntimeError("boom")
        return real(plan, fallback_from)

    return render
