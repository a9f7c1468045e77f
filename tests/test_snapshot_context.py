"""Releases, discussions and fixed_by in the snapshot format, and their rewind in the as-of view."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from issue_assistant.errors import UserError
from issue_assistant.tracker.asof import AsOfView
from issue_assistant.tracker.snapshot import read_snapshot, write_snapshot
from tests import contextdata as data
from tests.contextdata import day


def test_round_trip_keeps_releases_discussions_and_fixed_by(tmp_path: Path) -> None:
    back = read_snapshot(data.write(tmp_path / "s.jsonl.gz"))
    assert [r.tag for r in back.releases() or []] == ["v1.2.0", "v1.1.0", "v1.0.0"]
    assert [d.number for d in back.discussions() or []] == [50, 51, 52]
    assert back.discussions()[2].locked and back.discussions()[2].closed
    assert back.get_issue(3).fixed_by[0].files == ["src/tinyparse/cache.py", "docs/cache.md"]
    assert back.get_issue(5).fixed_by is None
    assert back.repository.includes == ["releases", "discussions", "fixed_by"]


def test_lines_have_the_documented_kinds(tmp_path: Path) -> None:
    path = data.write(tmp_path / "s.jsonl")
    kinds = [json.loads(line)["kind"] for line in path.read_text().splitlines()]
    assert kinds == ["repository"] + ["issue"] * 5 + ["release"] * 3 + ["discussion"] * 3
    release = json.loads(path.read_text().splitlines()[6])
    assert set(release) >= {"tag", "name", "published_at", "notes"}


def test_readers_ignore_kinds_they_do_not_know(tmp_path: Path) -> None:
    path = data.write(tmp_path / "s.jsonl")
    lines = path.read_text().splitlines()
    lines.insert(2, json.dumps({"kind": "milestone", "number": 1, "title": "v2"}))
    lines.append(json.dumps({"kind": "workflow_run", "whatever": [1, 2]}))
    path.write_text("\n".join(lines) + "\n")
    back = read_snapshot(path)
    assert len(back) == 5 and len(back.releases() or []) == 3


def test_a_bad_release_line_names_line_and_field(tmp_path: Path) -> None:
    path = data.write(tmp_path / "s.jsonl")
    lines = path.read_text().splitlines()
    lines[7] = json.dumps({"kind": "release", "tag": "v9", "published_at": "yesterday"})
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(UserError) as err:
        read_snapshot(path)
    assert "published_at" in str(err.value) and ":8" in str(err.value)


def test_unknown_when_not_fetched_and_empty_when_fetched(tmp_path: Path) -> None:
    path = tmp_path / "none.jsonl"
    write_snapshot(path, data.repository(includes=()), data.ISSUES)
    old = read_snapshot(path)
    assert old.releases() is None and old.discussions() is None
    assert AsOfView(old, day(50)).releases() is None
    write_snapshot(path, data.repository(includes=("releases",)), data.ISSUES)
    assert read_snapshot(path).releases() == []


def test_view_shows_only_earlier_releases_and_discussions() -> None:
    view = AsOfView(data.snapshot(), day(20))
    assert [r.tag for r in view.releases() or []] == ["v1.1.0", "v1.0.0"]
    assert [d.number for d in view.discussions() or []] == [50, 51, 52]
    assert [d.number for d in AsOfView(data.snapshot(), day(4)).discussions() or []] == [50]


def test_a_discussion_answered_later_shows_as_unanswered() -> None:
    before = {d.number: d for d in AsOfView(data.snapshot(), day(20)).discussions() or []}
    assert before[50].answered and before[50].answer
    assert not before[52].answered and before[52].answer is None
    assert not before[52].closed and not before[52].locked
    after = {d.number: d for d in AsOfView(data.snapshot(), day(45)).discussions() or []}
    assert after[52].answered and after[52].closed


def test_fixed_by_is_hidden_until_the_issue_was_closed() -> None:
    snap = data.snapshot()
    assert AsOfView(snap, day(6.8)).get_issue(1).fixed_by is None
    assert AsOfView(snap, day(8)).get_issue(1).fixed_by[0].number == 2
