"""As of the moment, really (issue 16): `renamed` events are kept (snapshot and live fetch),
titles are shown and searched as they were at the moment, and `list_labels` shows only labels
used by then. Recorded for `docs/reliability.md`.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from issue_assistant.config.labels import load_labels
from issue_assistant.config.sections import Config
from issue_assistant.index.local import open_index
from issue_assistant.tools import Toolbox
from issue_assistant.tracker.asof import AsOfView
from issue_assistant.tracker.fetch import fetch_snapshot
from issue_assistant.tracker.models import Event, Issue, LabelInfo, Repository, User
from issue_assistant.tracker.snapshot import Snapshot, read_snapshot, write_snapshot
from tests.fakegithub.fixtures import make_tracker
from tests.moments import context_of
from tests.test_races_faults import record

PROPERTY = "reliability"  # what each case records for tests/reliability.py

ROOT = Path(__file__).resolve().parents[1]
T0 = datetime(2024, 3, 1, tzinfo=UTC)
OLD, NEW = "Setup question about the installer", "Crash when loading parquet shards"


def snapshot() -> Snapshot:
    """#1 is renamed (to the words of #2) ten days after #2 was opened; `late` is first used
    after #2's moment, `early` before it."""
    renamed = Event(
        event="renamed",
        created_at=T0 + timedelta(days=15),
        actor=User(login="maint"),
        rename_from=OLD,
        rename_to=NEW,
    )
    first = Issue(
        number=1,
        title=NEW,
        body="It does not start.",
        user=User(login="a"),
        created_at=T0,
        labels=["early", "late"],
        events=[
            Event(event="labeled", created_at=T0 + timedelta(hours=1), label="early"),
            renamed,
            Event(event="labeled", created_at=T0 + timedelta(days=16), label="late"),
        ],
        comments=[],
    )
    target = Issue(
        number=2,
        title="Crash when loading parquet files",
        body="Loading parquet shards crashes.",
        user=User(login="b"),
        created_at=T0 + timedelta(days=5),
        events=[],
        comments=[],
    )
    filler = [
        Issue(
            number=n,
            title=f"Unrelated topic {n} about widgets",
            body="widgets",
            user=User(login="c"),
            created_at=T0 + timedelta(days=1, hours=n),
            events=[],
            comments=[],
        )
        for n in range(3, 8)
    ]
    labels = [LabelInfo(name=n) for n in ("early", "late", "bug")]
    repo = Repository(full_name="o/r", fetched_at=T0 + timedelta(days=30), labels=labels)
    return Snapshot(repo, [first, target, *filler])


@pytest.fixture
def context(tmp_path):
    snap = snapshot()
    index = open_index(snap, tmp_path / "cache")
    view = AsOfView.for_issue(snap, 2)
    labels = load_labels(ROOT / "labels.toml")
    return context_of(view, index, labels, Config())


def test_titles_are_shown_as_they_were_at_the_moment(context, record_property):
    shown = [c.issue.title for c in context.candidates if c.issue.number == 1]
    got = context.moment.get_issue(1, context.issue)
    box = Toolbox.for_context(context)
    text = box.call("get_issue", {"number": 1}).text
    listed = box.call("search_issues", {"query": "installer setup question"}).text
    leaks = int(NEW in text) + int(NEW in listed) + int(got.title != OLD) + int(NEW in shown)
    record(
        record_property,
        "asof",
        leaks,
        0,
        0,
        kind="a title renamed later",
        where="shown (context, tools)",
    )
    assert got.title == OLD and OLD in text and NEW not in text
    assert "#1" in listed and NEW not in listed


def test_a_title_renamed_later_is_not_searchable_by_its_later_words(context, record_property):
    at, issue = context.moment, context.issue
    later = [c.issue.number for c in at.search("parquet shards crash loading", under=issue)]
    then = [c.issue.number for c in at.search("installer setup question", under=issue)]
    like = [c.issue.number for c in at.like(issue)]
    leaks = int(1 in later)
    record(
        record_property, "asof", leaks, 0, 0, kind="a title renamed later", where="searched (index)"
    )
    assert 1 not in later and 1 in then
    assert 1 not in like[:1]  # the new issue's own words do not find #1's later title first


def test_list_labels_shows_only_labels_used_by_the_moment(context, record_property):
    text = Toolbox.for_context(context).call("list_labels", {}).text
    others = next(line for line in text.splitlines() if line.startswith("other labels"))
    record(
        record_property,
        "asof",
        int("late" in others),
        0,
        0,
        kind="a label first used later",
        where="list_labels",
    )
    assert "early" in others and "late" not in others


def test_renamed_events_are_kept_by_the_live_fetch_and_the_snapshot(
    fake_github, tmp_path, record_property
):
    one = fake_github.add_issue(NEW, "", "alice", created_at=T0)
    fake_github.add_event(
        one, "renamed", "maint", created_at=T0 + timedelta(days=1), rename=(OLD, NEW)
    )
    tracker = make_tracker(fake_github)
    live = tracker.get_issue(one, history=True)
    out = tmp_path / "s.jsonl"
    fetch_snapshot(tracker, out, console=None, fetched_at=T0 + timedelta(days=2))
    back = read_snapshot(out)
    kept = [e for e in back.get_issue(one).events or [] if e.event == "renamed"]
    record(
        record_property,
        "asof",
        int(not kept),
        0,
        0,
        kind="renamed events",
        where="live fetch and snapshot",
    )
    assert [(e.rename_from, e.rename_to) for e in live.events if e.event == "renamed"] == [
        (OLD, NEW)
    ]
    assert [(e.rename_from, e.rename_to) for e in kept] == [(OLD, NEW)]
    line = next(x for x in out.read_text().splitlines() if '"renamed"' in x)
    assert json.loads(line)["events"][0]["rename_from"] == OLD
    # written and read back again, the title as of the day before the rename is the old one
    write_snapshot(tmp_path / "again.jsonl", back.repository, back.all_issues())
    again = read_snapshot(tmp_path / "again.jsonl")
    assert AsOfView(again, T0 + timedelta(hours=1)).get_issue(one).title == OLD
