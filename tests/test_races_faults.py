"""Races and network faults against the fake GitHub, for `analyze` and `apply` (issue 8).

Every case: a first run meets the fault (or the race); a second run completes the job; a third
writes nothing. Measured on the fake's audit of every write: wrong writes (anything the
fault-free run would not have left), doubled writes (a comment posted twice, a second close)
and tracebacks. Each test records them for `docs/reliability.md` (`python -m tests.reliability`).
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from issue_assistant import action
from issue_assistant.approve.sweep import Approver
from issue_assistant.comment import Plan, extract_plan, render_comment
from issue_assistant.decision import Duplicate
from issue_assistant.tracker.client import github_retry
from tests.fakegithub import FakeGitHub
from tests.fakegithub.fixtures import TOKEN, make_tracker
from tests.test_action import BOT, DECISION, NOW, PENDING, REPO, environment, event, seed
from tests.test_approve import CONFIG, LABELS

TIMEOUT = 1  # the client's timeout in seconds; an injected timeout waits longer
SLOW = 1.3


# ---- what a run leaves -------------------------------------------------------------------------


def kind(body: str) -> str:
    """What one of the bot's comments is."""
    plan = extract_plan(body)
    if plan is not None:
        actor = plan.history[-1].actor if plan.history else ""
        return f"proposal:{plan.status}:{actor}"
    return body.strip().splitlines()[0] if body.strip() else "empty"


@dataclass(frozen=True)
class State:
    labels: tuple[str, ...]
    state: str
    comments: tuple[str, ...]
    claims: int
    closes: int

    def doubled(self) -> int:
        counts = Counter(self.comments)
        return sum(n - 1 for n in counts.values() if n > 1) + max(self.closes - 1, 0)

    def wrong(self, expected: State) -> int:
        """Writes this state holds that `expected` does not (or lacks), counted one by one."""
        labels = set(self.labels) ^ set(expected.labels)
        comments = set(self.comments) ^ set(expected.comments)
        return len(labels) + len(comments) + (self.state != expected.state) + self.claims

    def partial_of(self, expected: State, before: State) -> int:
        """Writes that neither the start nor the expected end holds (a run cut short may stop
        anywhere between the two, but never elsewhere)."""
        labels = set(self.labels) - set(expected.labels) - set(before.labels)
        comments = set(self.comments) - set(expected.comments) - set(before.comments)
        return len(labels) + len(comments)


def state_of(gh: FakeGitHub, number: int = 3) -> State:
    issue = gh.issues[number]
    own = [c.body for c in gh.comments.values() if c.issue == number and c.user == BOT]
    claims = sum(1 for r in gh.reactions if r.user == BOT)
    closes = sum(1 for e in gh.events if e.issue == number and e.event == "closed")
    return State(
        tuple(sorted(n.casefold() for n in issue.labels)),
        f"{issue.state}:{issue.state_reason or ''}",
        tuple(sorted(kind(b) for b in own)),
        claims,
        closes,
    )


def record(
    record_property, category: str, wrong: int, doubled: int, tracebacks: int, **what: str
) -> None:
    """The reliability contract (common brief), plus what was tried (`kind`, `where`)."""
    data = {
        "category": category,
        "cases": 1,
        "wrong_writes": wrong,
        "doubled_writes": doubled,
        "tracebacks": tracebacks,
        **what,
    }
    record_property("reliability", json.dumps(data))


# ---- runs --------------------------------------------------------------------------------------


PLANS = {
    "duplicate": {"duplicate": Duplicate(number=1, confidence=0.9)},
    "questions": {"questions": ["Which page of the README?"]},
}


def seed_vote(gh: FakeGitHub, variant: str) -> int:
    """#3 with the assistant's pending comment and a maintainer's 👍."""
    plan = Plan(
        repository=REPO,
        issue=3,
        reporter="Codertocat",
        created_at=NOW,
        areas=["area: docs"],
        priority="p2",
        engine="fake",
        labels_before=["bug"],
        **PLANS[variant],  # type: ignore[arg-type]
    )
    comment = gh.add_comment(3, render_comment(plan), BOT)
    gh.issues[3].labels.append(PENDING)
    gh.add_reaction(comment, "maria", "+1")
    return comment


def tracker(gh: FakeGitHub):
    return make_tracker(
        gh, timeout=TIMEOUT, retry=github_retry(total=3, backoff_factor=0, max_wait=5)
    )


def run_apply(gh: FakeGitHub, tmp_path: Path, capsys) -> tuple[int, str]:
    path = tmp_path / "schedule.json"
    path.write_text('{"schedule": "*/15 * * * *"}')
    status = action.main(environment(tmp_path, "apply", "schedule", path), tracker=tracker(gh))
    return status, capsys.readouterr().err


def run_analyze(gh: FakeGitHub, tmp_path: Path, capsys, fake_engine) -> tuple[int, str]:
    fake_engine.enqueue(DECISION)
    env = environment(tmp_path, "analyze", "issues", event(tmp_path, "issues/opened.payload.json"))
    status = action.main(env, tracker=tracker(gh))
    fake_engine.queue.clear()
    return status, capsys.readouterr().err


# ---- faults ------------------------------------------------------------------------------------

# name -> keyword arguments of `FakeGitHub.fail_next`
FAULTS: dict[str, dict[str, Any]] = {
    "500 once": {"status": 500},
    "502 burst": {"status": 502, "times": 8},
    "503 after the write": {"status": 503, "apply": True},
    "secondary rate limit": {"status": 403, "headers": {"Retry-After": "1"}},
    "reset after the write": {"status": 0, "apply": True, "disconnect": True},
    "timeout after the write": {"status": 0, "apply": True, "delay": SLOW},
    "404": {"status": 404},
    "410": {"status": 410},
    "422": {"status": 422},
}
SLOW_FAULTS = {"timeout after the write", "secondary rate limit"}

APPLY_TARGETS = {
    "claim": ("POST", r"/issues/comments/\d+/reactions$"),
    "labels": ("POST", r"/issues/3/labels$"),
    "comment": ("POST", r"/issues/3/comments$"),
    "close": ("PATCH", r"/issues/3$"),
    "edit": ("PATCH", r"/issues/comments/\d+$"),
    "unlabel": ("DELETE", r"/issues/3/labels/"),
    "release": ("DELETE", r"/reactions/\d+$"),
    "read comments": ("GET", r"/issues/3/comments$"),
}
ANALYZE_TARGETS = {
    "comment": ("POST", r"/issues/3/comments$"),
    "labels": ("POST", r"/issues/3/labels$"),
    "read issue": ("GET", r"/issues/3$"),
    "read comments": ("GET", r"/issues/3/comments$"),
}


def _cases(targets: dict[str, tuple[str, str]], variants: list[str]) -> list[Any]:
    cases = []
    for variant in variants:
        for target, (method, _) in targets.items():
            if variant == "questions" and target == "close":
                continue  # nothing is closed
            for fault in FAULTS:
                if target == "release" and fault == "404":
                    continue  # a 404 on DELETE means "already gone": the claim is withdrawn
                if fault in SLOW_FAULTS and (variant != variants[0] or method == "GET"):
                    continue  # the slow ones once per target, to keep the suite short
                cases.append(pytest.param(variant, target, fault, id=f"{variant}-{target}-{fault}"))
    return cases


@pytest.fixture
def gh():
    with FakeGitHub(REPO, token=TOKEN) as server:
        seed(server)
        yield server


_REFERENCES: dict[str, State] = {}


def _reference(tmp_path: Path, capsys, run, name: str) -> State:
    """The state a fault-free run leaves (computed once per scenario)."""
    if name not in _REFERENCES:
        with FakeGitHub(REPO, token=TOKEN) as clean:
            seed(clean)
            start = run(clean, tmp_path / "reference")
            assert start[0] == 0, start[1]
            _REFERENCES[name] = state_of(clean)
    return _REFERENCES[name]


def _three_runs(gh, run, fault_args, record_property, expected: State, **what: str) -> None:
    before = state_of(gh)
    gh.clear_requests()
    gh.fail_next(*fault_args[0], **fault_args[1])
    first, err1 = run(gh)
    gh.failures.clear()  # the burst is over by the next run
    after_first = state_of(gh)
    second, err2 = run(gh)
    final = state_of(gh)
    gh.clear_requests()
    third, err3 = run(gh)
    tracebacks = sum("Traceback" in e for e in (err1, err2, err3))
    wrong = final.wrong(expected) + after_first.partial_of(expected, before)
    doubled = final.doubled() + after_first.doubled()
    record(record_property, "fault", wrong, doubled, tracebacks, **what)
    assert tracebacks == 0, err1 + err2 + err3
    # 2: the issue itself answered 404/410 ("no such issue")
    assert first in (0, 1, 2) and second == 0 and third == 0, err1 + err2
    if first:  # a failed run says so in one line
        assert len([ln for ln in err1.splitlines() if ln.startswith("::error::")]) == 1, err1
    assert final == expected
    assert gh.writes == []  # the third run writes nothing
    assert wrong == 0 and doubled == 0


@pytest.mark.parametrize(("variant", "target", "fault"), _cases(APPLY_TARGETS, list(PLANS)))
def test_apply_under_a_fault(gh, tmp_path, capsys, record_property, variant, target, fault):
    def run(server, where=tmp_path):
        where.mkdir(exist_ok=True)
        return run_apply(server, where, capsys)

    def reference(server, where):
        seed_vote(server, variant)
        return run(server, where)

    expected = _reference(tmp_path, capsys, reference, f"apply-{variant}")
    seed_vote(gh, variant)
    method, path = APPLY_TARGETS[target]
    what = {"kind": fault, "where": f"apply: {target}"}
    _three_runs(gh, run, ((method, path), FAULTS[fault]), record_property, expected, **what)


@pytest.mark.parametrize(("variant", "target", "fault"), _cases(ANALYZE_TARGETS, ["new"]))
def test_analyze_under_a_fault(
    gh, tmp_path, capsys, record_property, fake_engine, variant, target, fault
):
    def run(server, where=tmp_path):
        where.mkdir(exist_ok=True)
        return run_analyze(server, where, capsys, fake_engine)

    expected = _reference(tmp_path, capsys, run, "analyze")
    method, path = ANALYZE_TARGETS[target]
    what = {"kind": fault, "where": f"analyze: {target}"}
    _three_runs(gh, run, ((method, path), FAULTS[fault]), record_property, expected, **what)


# ---- races -------------------------------------------------------------------------------------


def _approver(gh: FakeGitHub) -> Approver:
    return Approver(tracker(gh), LABELS, CONFIG, writes="live", now=gh.clock)


@pytest.mark.parametrize("variant", list(PLANS))
@pytest.mark.parametrize("lag", [0.0, 0.05, 0.2])
def test_two_apply_runs_at_once_write_once(gh, tmp_path, capsys, record_property, variant, lag):
    """Both runs read everything before either writes (their reads are held back together)."""

    def reference(server, where):
        where.mkdir(exist_ok=True)
        seed_vote(server, variant)
        return run_apply(server, where, capsys)

    expected = _reference(tmp_path, capsys, reference, f"apply-{variant}")
    seed_vote(gh, variant)
    if lag:
        gh.fail_next("GET", r"/reactions$", 0, apply=True, delay=lag, times=2)
    barrier = threading.Barrier(2)
    results: list[Any] = []
    errors: list[BaseException] = []

    def one() -> None:
        try:
            approver = _approver(gh)
            barrier.wait()
            results.extend(approver.run())
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=one) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    posts = [w for w in gh.issue_writes if w[0] == "POST" and w[1].endswith("/comments")]
    final = state_of(gh)
    what = {"kind": "two apply runs at once", "where": f"apply: {variant}"}
    record(record_property, "race", final.wrong(expected), final.doubled(), len(errors), **what)
    assert not errors
    assert sorted(r.status for r in results) == ["approved", "skipped"]
    # "Duplicate of #1" once; the questions are in the approved comment, never posted apart
    assert len(posts) == (1 if variant == "duplicate" else 0)
    assert final == expected
    gh.clear_requests()
    assert _approver(gh).run() == [] and gh.writes == []  # a later run has nothing to do


def test_a_vote_during_reanalysis_is_for_the_text_the_maintainer_saw(
    gh, tmp_path, capsys, record_property, fake_engine
):
    assert run_analyze(gh, tmp_path, capsys, fake_engine)[0] == 0
    comment = next(c for c in gh.comments.values() if c.user == BOT)
    shown = comment.body

    def vote_while_the_engine_runs(context):
        gh.add_reaction(comment.id, "maria", "+1")
        return DECISION.model_copy(update={"priority": "p1", "questions": []})

    fake_engine.enqueue(vote_while_the_engine_runs)
    env = environment(tmp_path, "analyze", "issues", event(tmp_path, "issues/opened.payload.json"))
    gh.clear_requests()
    assert action.main(env, tracker=tracker(gh)) == 0
    capsys.readouterr()
    wrong = int(comment.body != shown) + len(gh.writes)
    assert run_apply(gh, tmp_path, capsys)[0] == 0  # the second run: apply what was seen
    plan = extract_plan(comment.body)
    labels = {n.casefold() for n in gh.issues[3].labels}
    wrong += int("p1" in labels) + int("p2" not in labels)
    gh.clear_requests()
    run_apply(gh, tmp_path, capsys)
    what = {"kind": "vote while the engine runs", "where": "analyze then apply"}
    record(record_property, "race", wrong + len(gh.writes), state_of(gh).doubled(), 0, **what)
    assert plan.status == "approved" and plan.priority == "p2"
    assert wrong == 0 and gh.writes == []


def test_a_vote_just_before_the_edit_does_not_approve_the_new_text(
    gh, tmp_path, capsys, record_property, fake_engine
):
    """The vote lands between the last look and the edit: it is older than the new text."""
    assert run_analyze(gh, tmp_path, capsys, fake_engine)[0] == 0
    comment = next(c for c in gh.comments.values() if c.user == BOT)
    gh.before(
        "PATCH",
        rf"/issues/comments/{comment.id}$",
        lambda: gh.add_reaction(comment.id, "maria", "+1"),
    )
    fake_engine.enqueue(DECISION.model_copy(update={"priority": "p1"}))
    env = environment(tmp_path, "analyze", "issues", event(tmp_path, "issues/opened.payload.json"))
    assert action.main(env, tracker=tracker(gh)) == 0
    assert extract_plan(comment.body).priority == "p1"  # edited, then the 👍 came in before it
    status, _ = run_apply(gh, tmp_path, capsys)
    wrong = int(extract_plan(comment.body).status != "pending")
    # a vote on the new text applies it
    gh.add_comment(3, "/assistant approve", "Codertocat")
    assert run_apply(gh, tmp_path, capsys)[0] == 0
    plan = extract_plan(comment.body)
    wrong += int(plan.status != "approved" or "p1" not in {n for n in gh.issues[3].labels})
    gh.clear_requests()
    run_apply(gh, tmp_path, capsys)
    what = {"kind": "vote between the last look and the edit", "where": "analyze then apply"}
    record(record_property, "race", wrong + len(gh.writes), state_of(gh).doubled(), 0, **what)
    assert status == 0 and wrong == 0 and gh.writes == []
    assert plan.history[-1].actor == "Codertocat"
