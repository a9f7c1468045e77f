"""When the repository changes under the assistant (issue 27): issues deleted, transferred,
closed or locked between the index and the write, and answers that are not issues. The tracker is
the truth at write time, one issue never stops a sweep, and the index forgets what is gone.
Recorded for `docs/reliability.md`.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from issue_assistant.backlog.duplicates import duplicates_live
from issue_assistant.comment import extract_plan
from issue_assistant.index import IssueIndex
from issue_assistant.index.local import index_path
from tests.fakegithub import FakeGitHub
from tests.fakegithub.fixtures import make_tracker
from tests.moments import moment_of
from tests.test_approve import CONFIG, LABELS
from tests.test_backlog import BOT, NOW, REPO, answers, cli_base, proposals, run, seed
from tests.test_backlog_duplicates import gh as dup_gh  # noqa: F401 - the groups' fixture
from tests.test_races_faults import record

PROPERTY = "reliability"  # what each case records for tests/reliability.py

CATEGORY = "change"


@pytest.fixture
def gh():
    with FakeGitHub(REPO, token="test-token") as server:
        yield server


def indexed(tmp_path) -> set[int]:
    return IssueIndex(index_path(tmp_path / "cache", REPO)).numbers()


def bot_comments(gh: FakeGitHub) -> list:
    return [c for c in gh.comments.values() if c.user == BOT]


# ---- a duplicate's original gone before --post ---------------------------------------------


CHANGES = {
    "deleted": lambda gh: gh.delete_issue(1),
    "transferred": lambda gh: gh.transfer_issue(1),
    "closed": lambda gh: setattr(gh.issues[1], "state", "closed"),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_groups_original_gone_is_never_proposed(dup_gh, tmp_path, change, record_property):  # noqa: F811
    gh = dup_gh
    tracker = make_tracker(gh)
    first = duplicates_live(tracker, LABELS, CONFIG, now=NOW, cache_dir=tmp_path, writes="live")
    assert [g.original.number for g in first.groups] == [1]  # the index holds the group
    CHANGES[change](gh)
    found = duplicates_live(
        make_tracker(gh), LABELS, CONFIG, now=NOW, cache_dir=tmp_path, writes="live", post=True
    )
    wrong = [c for c in bot_comments(gh) if (p := extract_plan(c.body)) and p.duplicate]
    record(record_property, CATEGORY, len(wrong), 0, 0, kind=f"original {change}", where="--post")
    assert wrong == [] and found.run is not None and found.run.proposed == []
    assert not any("#1" in c.body for c in bot_comments(gh))


def test_a_duplicate_gone_is_left_out_of_a_triage_proposal(
    gh, tmp_path, fake_engine, record_property
):
    """Any engine's duplicate is confirmed on GitHub before the comment names it."""
    from issue_assistant.decision import Decision, Duplicate
    from issue_assistant.live import analyze_live

    seed(gh, 2)

    def dup(context):  # noqa: ANN001, ANN202
        return Decision(type="feature", duplicate=Duplicate(number=1, confidence=0.9))

    tracker = make_tracker(gh)
    run(gh, tmp_path, writes="dry-run", limit=0)  # the index holds #1
    gh.delete_issue(1)
    fake_engine.enqueue(dup)
    index = IssueIndex(index_path(tmp_path / "cache", REPO))
    result = analyze_live(
        REPO,
        2,
        labels=LABELS,
        config=CONFIG,
        engine_name=None,
        writes="live",
        now=NOW,
        # the backlog's: its index this run's, the tracker on GitHub in it
        moment=moment_of(tracker, index, LABELS, CONFIG, live=tracker),
    )
    wrong = [c for c in bot_comments(gh) if "#1 " in c.body or "#1\n" in c.body]
    record(record_property, CATEGORY, len(wrong), 0, 0, kind="duplicate deleted", where="analyze")
    assert result.plan is not None and result.plan.duplicate is None
    assert wrong == [] and len(bot_comments(gh)) == 1  # the rest is still proposed


# ---- one issue that fails never stops the sweep --------------------------------------------


FAULTS = {
    "deleted": lambda gh, n: gh.delete_issue(n),
    "transferred": lambda gh, n: gh.transfer_issue(n),
    "bad body": lambda gh, n: gh.fail_next("GET", rf"/issues/{n}$", 200, body={"number": n}),
    "server error": lambda gh, n: gh.fail_next("GET", rf"/issues/{n}$", 502, times=9),
    "locked": lambda gh, n: setattr(gh.issues[n], "locked", True),
    "locked at the write": lambda gh, n: gh.fail_next(
        "POST", rf"/issues/{n}/comments$", 403, body={"message": "Issue is locked."}
    ),
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_one_issue_that_fails_never_stops_the_sweep(
    gh, tmp_path, fake_engine, fault, record_property
):
    numbers = seed(gh, 3)
    answers(fake_engine)
    run(gh, tmp_path, writes="dry-run", limit=0)  # the index is built with every issue
    assert set(numbers) <= indexed(tmp_path)
    FAULTS[fault](gh, numbers[0])
    result = run(gh, tmp_path, limit=10)  # no exception: recorded, and the run goes on
    first = next(i for i in result.items if i.number == numbers[0])
    others = {i.number for i in result.proposed}
    record(record_property, CATEGORY, 0, 0, 0, kind=fault, where="backlog --apply")
    assert first.action in ("skipped", "failed") and first.reason
    if fault in ("deleted", "transferred"):
        assert (first.action, first.rule) == ("skipped", "gone") and "deleted" in first.reason
    assert others == set(numbers[1:])
    assert proposals(gh) == dict.fromkeys(numbers[1:], 1)
    if fault in ("deleted", "transferred"):
        assert numbers[0] not in indexed(tmp_path)  # forgotten: never picked first again
        again = run(gh, tmp_path, limit=10)
        assert again.items == [] and again.stopped is None


def test_the_command_line_sweep_exits_0_after_a_deleted_issue(
    gh, tmp_path, fake_engine, monkeypatch, capsys, record_property
):  # noqa: E501
    from issue_assistant.cli import main

    numbers = seed(gh, 2)
    answers(fake_engine)
    base = cli_base(gh, tmp_path, monkeypatch)
    assert main(base) == 0  # a dry run: the index
    gh.delete_issue(numbers[0])
    codes = [main([*base, "--apply"]) for _ in range(2)]
    err = capsys.readouterr().err
    record(record_property, CATEGORY, 0, 0, int("Traceback" in err), kind="deleted", where="CLI")
    assert codes == [0, 0] and "Traceback" not in err
    assert proposals(gh) == {numbers[1]: 1}


# ---- the index forgets what is gone --------------------------------------------------------


def test_the_live_refresh_forgets_deleted_and_transferred_issues(gh, tmp_path, record_property):
    from issue_assistant.sync import FULL_EVERY, refresh_index

    numbers = seed(gh, 4)
    tracker = make_tracker(gh)
    index = refresh_index(tracker, tmp_path, NOW)
    assert set(numbers) <= index.numbers()
    gh.delete_issue(numbers[0])
    gh.transfer_issue(numbers[1])
    same_day = refresh_index(make_tracker(gh), tmp_path, NOW + timedelta(hours=1))
    assert numbers[0] in same_day.numbers()  # only what changed is listed within the day
    later = refresh_index(make_tracker(gh), tmp_path, NOW + FULL_EVERY + timedelta(hours=1))
    kept = later.numbers()
    record(record_property, CATEGORY, 0, 0, 0, kind="deleted, transferred", where="live refresh")
    assert numbers[0] not in kept and numbers[1] not in kept
    assert set(numbers[2:]) <= kept and len(later) == len(kept)
    hits = [h.number for h in later.search("support format", limit=10)]
    assert numbers[0] not in hits and numbers[1] not in hits and numbers[2] in hits


def test_a_failed_full_listing_removes_nothing(gh, tmp_path):
    from issue_assistant.sync import FULL_EVERY, refresh_index

    numbers = seed(gh, 3)
    refresh_index(make_tracker(gh), tmp_path, NOW)
    gh.fail_next("GET", r"/issues$", 502, times=9)
    later = refresh_index(make_tracker(gh), tmp_path, NOW + FULL_EVERY + timedelta(hours=1))
    assert set(numbers) <= later.numbers()


def test_two_backlog_runs_on_one_cache_take_turns(gh, tmp_path, fake_engine, record_property):
    """Two runs sharing one `--cache-dir` at once: the second waits for the first (the cache's
    lock), then finds nothing left; no tantivy `LockBusy`, one comment per issue."""
    import threading

    numbers = seed(gh, 3)
    answers(fake_engine, 40)
    results: dict[str, object] = {}

    def one(name: str) -> None:
        try:
            results[name] = run(gh, tmp_path, limit=10)
        except Exception as exc:  # noqa: BLE001 - counted: the point of the test
            results[name] = exc

    threads = [threading.Thread(target=one, args=(n,)) for n in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    errors = [r for r in results.values() if isinstance(r, Exception)]
    doubled = sum(n - 1 for n in proposals(gh).values())
    record(record_property, CATEGORY, 0, doubled, len(errors), kind="shared cache", where="backlog")
    assert errors == [] and proposals(gh) == dict.fromkeys(numbers, 1)


def test_only_the_issues_and_discussions_still_there_are_named(gh, record_property):
    from issue_assistant.comment import Evidence, Plan
    from issue_assistant.decision import Duplicate, SeeAlso
    from issue_assistant.named import confirm_named

    seed(gh, 3)
    gh.add_discussion("How to load parquet?", "question", "carol", category="Q&A", created_at=NOW)
    gh.transfer_issue(1)
    plan = Plan(
        repository=REPO,
        issue=3,
        reporter="alice",
        created_at=NOW,
        type="feature",
        engine="fake",
        duplicate=Duplicate(number=1, confidence=0.9),
        summary="Like #1.",
        evidence=[Evidence(number=n, title="x", state="open") for n in (1, 2)],
        see_also=[SeeAlso(number=1, title="How to load parquet?"), SeeAlso(number=7, title="gone")],
    )
    kept = confirm_named(make_tracker(gh), plan)
    named = int(kept.duplicate is not None) + sum(s.number == 7 for s in kept.see_also)
    record(record_property, CATEGORY, named, 0, 0, kind="transferred", where="named in a comment")
    assert kept.duplicate is None and kept.summary == "" and kept.type == "feature"
    assert [e.number for e in kept.evidence] == [2] and [s.number for s in kept.see_also] == [1]
    same = Plan(repository=REPO, issue=3, reporter="a", created_at=NOW, type="feature", engine="x")
    assert confirm_named(make_tracker(gh), same) is same  # nothing named: nothing read
