"""Gold and selection: hand-made issues, and the poetry sample's real events."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from issue_assistant.config.labels import load_labels
from issue_assistant.errors import UserError
from issue_assistant.evaluate.gold import (
    assistant_touched,
    gold_for,
    is_sure_original,
    later_labels,
    maintainer_asked,
)
from issue_assistant.evaluate.selection import parse_shard, select, shard
from issue_assistant.tracker.asof import AsOfView
from issue_assistant.tracker.models import Comment, Event, Issue, Repository, User
from issue_assistant.tracker.snapshot import Snapshot, read_snapshot

HERE = Path(__file__).resolve().parent
DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
POETRY_LABELS = HERE / "data" / "evaluate" / "poetry.labels.toml"
T0 = datetime(2025, 1, 1, tzinfo=UTC)
BOT = "github-actions[bot]"


@pytest.fixture(scope="module")
def labels():
    return load_labels(POETRY_LABELS)


@pytest.fixture(scope="module")
def poetry():
    return read_snapshot(DATA / "poetry-sample.jsonl.gz")


def user(login: str, kind: str = "User") -> User:
    return User(login=login, type=kind)


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def labeled(label: str, who: str, minutes: float, kind: str = "User") -> Event:
    return Event(event="labeled", label=label, actor=user(who, kind), created_at=at(minutes))


def comment(who: str, minutes: float, body: str) -> Comment:
    return Comment(user=user(who), created_at=at(minutes), body=body)


def issue(number: int, minutes: float = 0, **kw: object) -> Issue:
    base = {
        "title": f"Issue {number}",
        "body": "",
        "user": user("reporter"),
        "created_at": at(minutes),
        "events": [],
        "comments": [],
    }
    base.update(kw)
    return Issue(number=number, **base)  # type: ignore[arg-type]


def tracker(*issues: Issue) -> Snapshot:
    repo = Repository(full_name="octo/repo", fetched_at=at(10_000), maintainers=["maint"])
    return Snapshot(repo, issues)


def test_later_labels_by_people_only_and_present_ones_count_for_neither(labels):
    i = issue(
        1,
        labels=["kind/feature", "area/core", "area/docs", "area/venv"],
        events=[
            labeled("kind/bug", "reporter", 0),  # the issue form's, at opening
            labeled("kind/feature", "reporter", 0),  # present at the moment: neither
            labeled("area/core", "maint", 60),  # a maintainer, later: gold
            labeled("area/docs", "someone[bot]", 60, "Bot"),  # a bot: not gold
            labeled("area/venv", BOT, 60),  # the assistant: not gold
            labeled("area/solver", "maint", 60),  # added, then removed: not gold
            Event(event="unlabeled", label="area/solver", actor=user("maint"), created_at=at(61)),
            Event(event="unlabeled", label="kind/bug", actor=user("maint"), created_at=at(61)),
        ],
    )
    later = later_labels(i, at(1), labels, BOT)
    assert later == {"type": [], "area": ["area/core"], "topic": [], "priority": []}
    gold = gold_for(tracker(i), i, at(1), labels, BOT)
    assert sorted(gold.present) == ["kind/bug", "kind/feature"]
    assert gold.type_gold is None
    assert assistant_touched(i, BOT)


def test_without_events_every_current_label_counts_as_later(labels):
    i = issue(1, labels=["kind/bug", "area/core", "status/triage"], events=None, comments=None)
    gold = gold_for(tracker(i), i, at(1), labels, BOT)
    assert gold.labels["type"] == ["kind/bug"] and gold.labels["area"] == ["area/core"]
    assert gold.present == [] and not gold.events_known
    assert gold.type_gold == "kind/bug"
    assert gold.asked is None  # comments unknown
    assert gold.question_counted  # kind/bug asks for the version


def test_maintainer_asked_reads_the_first_maintainer_comment():
    repo = Repository(full_name="o/r", fetched_at=at(0), maintainers=["maint"])
    asked = issue(
        1,
        comments=[
            comment("passerby", 5, "Same here?"),  # not a maintainer
            comment("maint", 10, "Which version do you use?"),
            comment("maint", 20, "Thanks."),
        ],
    )
    assert maintainer_asked(asked, repo, at(1), None, BOT) is True
    link_only = issue(2, comments=[comment("maint", 10, "See https://x.org/?q=1 and `a?b`")])
    assert maintainer_asked(link_only, repo, at(1), None, BOT) is False
    label = issue(3, events=[labeled("needs info", "maint", 30)])
    assert maintainer_asked(label, repo, at(1), "needs info", BOT) is True
    assert maintainer_asked(issue(4, comments=None), repo, at(1), None, BOT) is None


def test_sure_original_open_at_the_moment_and_opened_or_triaged_by_a_maintainer():
    by_maintainer = issue(1, user=user("maint"))
    triaged = issue(2, events=[labeled("kind/bug", "maint", 5)])
    triaged_late = issue(3, events=[labeled("kind/bug", "maint", 500)])
    closed_then = issue(
        4,
        user=user("maint"),
        state="closed",
        closed_at=at(50),
        events=[Event(event="closed", actor=user("maint"), created_at=at(50))],
    )
    closed_later = issue(
        5,
        user=user("maint"),
        state="closed",
        closed_at=at(500),
        events=[Event(event="closed", actor=user("maint"), created_at=at(500))],
    )
    t = tracker(by_maintainer, triaged, triaged_late, closed_then, closed_later)
    moment = at(100)
    assert is_sure_original(t, 1, moment, BOT)
    assert is_sure_original(t, 2, moment, BOT)
    assert not is_sure_original(t, 3, moment, BOT)  # triaged only after the moment
    assert not is_sure_original(t, 4, moment, BOT)  # already closed
    assert is_sure_original(t, 5, moment, BOT)  # closed since, open then
    assert not is_sure_original(t, 99, moment, BOT)


def test_duplicate_gold_needs_an_older_original_and_a_closed_issue(labels):
    original = issue(1, user=user("maint"))
    dup = issue(2, 10, state="closed", closed_at=at(20), duplicate_of=1)
    still_open = issue(3, 10, duplicate_of=1)
    newer = issue(4, 10, state="closed", closed_at=at(20), duplicate_of=5)
    t = tracker(original, dup, still_open, newer, issue(5, 15))
    assert gold_for(t, dup, at(11), labels, BOT).duplicate_of == 1
    assert gold_for(t, dup, at(11), labels, BOT).sure
    assert gold_for(t, still_open, at(11), labels, BOT).duplicate_of is None
    assert gold_for(t, newer, at(11), labels, BOT).duplicate_of is None


BODY = "Installing with a self-signed certificate fails; pip works. " * 8


def test_a_report_filed_again_is_a_duplicate_of_the_first_copy(labels):
    """A closed report its reporter filed again minutes later, nobody marking it, is a known
    duplicate of the first copy (any earlier copy right); a named original wins; an open copy,
    or another report of the same reporter, is not one."""
    first = issue(1, 0, title="Poetry ignores my certificate", body=BODY)
    closed = {"state": "closed", "closed_at": at(30)}
    second = issue(2, 1, title="Poetry ignores my certificate", body=BODY, **closed)
    third = issue(3, 2, title="Poetry ignores my certificate", body=BODY, **closed)
    named = issue(4, 3, title="Poetry ignores my certificate", body=BODY, duplicate_of=9, **closed)
    still_open = issue(5, 4, title="Poetry ignores my certificate", body=BODY)
    other = issue(6, 5, title="The lock file is not sorted", body="Its order changes.", **closed)
    t = tracker(first, second, third, named, still_open, other, issue(9, -60, user=user("m")))
    g = gold_for(t, third, at(3), labels, BOT)
    assert (g.duplicate_of, g.accept, g.refiled, g.original_known) == (1, [1, 2], True, True)
    assert gold_for(t, second, at(2), labels, BOT).accept == [1]
    g = gold_for(t, named, at(4), labels, BOT)
    assert (g.duplicate_of, g.refiled) == (9, False)
    assert gold_for(t, still_open, at(5), labels, BOT).duplicate_of is None
    assert gold_for(t, other, at(6), labels, BOT).duplicate_of is None


def test_evaluate_counts_a_refiled_report_as_a_duplicate(poetry, tmp_path, monkeypatch):
    """python-poetry #10284 and #10285 are #10283 filed again by its reporter within 81 seconds
    (a maintainer closed all three): `evaluate` replays them as duplicates, and a claim of an
    earlier copy is right, as the benchmarks count it. #10249 and #10239 are by one reporter
    too ("markers in poetry.lock are ..."), three days apart: claiming one is a false duplicate."""
    import argparse

    from issue_assistant.commands import evaluate as command
    from issue_assistant.decision import Decision, Duplicate
    from issue_assistant.engines.fake import FakeEngine
    from issue_assistant.evaluate.results import read_results

    claims = {10284: 10283, 10285: 10284, 10249: 10239}

    def answer(context):  # noqa: ANN001, ANN202
        number = claims.get(context.issue.number)
        return Decision(duplicate=Duplicate(number=number) if number else None)

    from issue_assistant.evaluate import runner, selection
    from issue_assistant.tracker.duplicates import refiled

    found = []  # the reports filed again are found once a run (a whole pass over the tracker)

    def counted(issues):  # noqa: ANN001, ANN202
        found.append(1)
        return refiled(issues)

    monkeypatch.setattr(selection, "refiled", counted)
    monkeypatch.setattr(runner, "refiled", counted)
    (tmp_path / "checkout" / ".git").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "checkout")
    monkeypatch.delenv("CI", raising=False)
    FakeEngine.reset()
    FakeEngine.enqueue(*[answer] * 60)
    parser = argparse.ArgumentParser()
    command.add_arguments(parser)
    report = tmp_path / "poetry.md"
    argv = ["--snapshot", str(DATA / "poetry-sample.jsonl.gz"), "--labels", str(POETRY_LABELS)]
    argv += ["--engine", "fake", "--limit", "60", "--report", str(report)]
    argv += ["--cache-dir", str(tmp_path / "cache")]
    try:
        assert command.run(parser.parse_args(argv)) == 0
    finally:
        FakeEngine.reset()
    assert len(found) == 1
    _, results, _ = read_results(report.with_suffix(".jsonl"))
    assert {10284, 10285, 10249} <= set(results)  # the two copies qualify as duplicates
    assert 10283 not in results  # the first: its type came with its form, nobody commented
    gold = {n: results[n].gold for n in (10284, 10285, 10249)}
    assert (gold[10284].duplicate_of, gold[10284].accept, gold[10284].refiled) == (
        10283,
        [10283],
        True,
    )
    assert (gold[10285].duplicate_of, gold[10285].accept) == (10283, [10283, 10284])
    assert gold[10249].duplicate_of is None and not gold[10249].refiled
    text = report.read_text()
    line = {n: next(x for x in text.splitlines() if x.startswith(f"| [#{n}]")) for n in claims}
    assert "| ✓ #10283 |" in line[10284] and "| ✓ #10284 |" in line[10285]
    assert "| ✗ #10239 (not a known duplicate) |" in line[10249]
    known = sum(1 for r in results.values() if r.gold.duplicate_of is not None)
    others = len(results) - known - sum(1 for r in results.values() if r.gold.duplicate_unknown)
    assert "| Duplicate precision | duplicates the engine proposed | 0.67 (2/3) |" in text
    rate = f"| False-duplicate rate | issues that were not known duplicates | {1 / others:.2f} (1/"
    assert f"{rate}{others}) |" in text
    assert "2 issue(s) nobody marked as duplicates repeat a report their reporter had filed" in text


def test_poetry_rewind_and_gold(poetry, labels):
    # #10131: opened with the form's kind/bug; abn later made it kind/question.
    i = poetry.get_issue(10131)
    view = AsOfView.for_issue(poetry, 10131)
    then = view.target()
    assert sorted(then.labels) == ["kind/bug", "status/triage"]
    assert then.state == "open" and then.comments == []
    assert 10131 not in {x.number for x in view.all_issues()}
    assert all(x.created_at <= view.moment for x in view.all_issues())
    gold = gold_for(poetry, i, view.moment, labels, BOT)
    assert gold.present == ["kind/bug"]
    assert gold.labels["type"] == ["kind/question"] and gold.type_gold == "kind/question"
    assert not gold.question_counted  # kind/question asks nothing

    # #10290: radoering added area/core later and asked for the call stack first.
    g = gold_for(
        poetry, poetry.get_issue(10290), AsOfView.for_issue(poetry, 10290).moment, labels, BOT
    )
    assert g.labels["area"] == ["area/core"] and g.present == ["kind/bug"]
    assert g.question_counted and g.asked is True

    # #10250, a duplicate of #10195: that one was open, but neither opened nor triaged by a
    # maintainer on 2025-03-04 (radoering labelled it on 03-15), so not a sure duplicate.
    g = gold_for(
        poetry, poetry.get_issue(10250), AsOfView.for_issue(poetry, 10250).moment, labels, BOT
    )
    assert g.duplicate_of == 10195 and g.original_known and not g.sure
    assert g.labels == {"type": [], "area": [], "topic": [], "priority": []}


def test_poetry_selection(poetry, labels):
    sel = select(poetry, labels, BOT, limit=50)
    assert sel.window == 64
    numbers = sel.numbers
    assert numbers == sorted(numbers, reverse=True)  # newest first
    assert {10131, 10290, 10250, 10185} <= set(numbers)
    assert all(poetry.get_issue(n).state == "closed" for n in numbers)
    assert select(poetry, labels, BOT, limit=3).numbers == numbers[:3]
    with pytest.raises(UserError):
        select(poetry, labels, BOT, limit=201)


def test_shards_split_by_position():
    items = [issue(n) for n in range(10)]
    parts = [shard(items, i, 3) for i in (1, 2, 3)]
    assert [p for p, _ in parts[0]] == [0, 3, 6, 9]
    assert sorted(p for part in parts for p, _ in part) == list(range(10))
    assert parse_shard("2/4") == (2, 4)
    for bad in ("0/4", "5/4", "x", "1/0"):
        with pytest.raises(UserError):
            parse_shard(bad)


def test_label_casing_does_not_lose_gold(labels):
    """GitHub treats `Kind/Bug` and `kind/bug` as one label: gold is spelled as labels.toml does."""
    i = issue(
        1,
        labels=["Kind/Bug", "AREA/CORE"],
        events=[labeled("Kind/Bug", "maint", 60), labeled("AREA/CORE", "maint", 60)],
    )
    later = later_labels(i, at(1), labels, BOT)
    assert later == {"type": ["kind/bug"], "area": ["area/core"], "topic": [], "priority": []}
    gold = gold_for(tracker(i), i, at(1), labels, BOT)
    assert gold.type_gold == "kind/bug" and gold.question_counted
