"""The original of a duplicate closed with GitHub's button comes from GraphQL (no comment)."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from rich.console import Console

from issue_assistant.tracker.fetch import fetch_snapshot, marked_duplicate
from issue_assistant.tracker.github_tracker import canonical_from
from issue_assistant.tracker.models import Event
from tests.fakegithub import FakeGitHub
from tests.fakegithub.fixtures import TOKEN, make_tracker

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)
CASSETTE_PORT = 18767


@pytest.fixture
def vcr_config() -> dict:
    return {
        "allowed_hosts": ["127.0.0.1"],
        "filter_headers": ["authorization"],
        "match_on": ["method", "uri", "body"],
    }


def at(minutes: int) -> datetime:
    return T0.replace(minute=minutes)


def button_repo(server: FakeGitHub) -> None:
    """#2 closed as a duplicate of #1 with the button; #3 marked then unmarked; #4 no mark."""
    server.set_permission("maint", "maintain")
    server.add_issue("Crash on start", "boom", "alice", created_at=at(0))
    two = server.add_issue(
        "Crashes at startup",
        "boom",
        "bob",
        created_at=at(5),
        state="closed",
        state_reason="duplicate",
        closed_at=at(7),
    )
    server.add_event(two, "marked_as_duplicate", "maint", created_at=at(6), canonical=1)
    server.add_event(two, "closed", "maint", created_at=at(7), state_reason="duplicate")
    three = server.add_issue("Crash?", "", "carol", created_at=at(10))
    server.add_event(three, "marked_as_duplicate", "maint", created_at=at(11), canonical=1)
    server.add_event(three, "unmarked_as_duplicate", "maint", created_at=at(12))
    server.add_issue("Docs", "", "dave", created_at=at(20))


def test_snapshot_reads_the_original_from_graphql(fake_github: FakeGitHub, tmp_path: Path):
    button_repo(fake_github)
    console = Console(file=io.StringIO())
    snap = fetch_snapshot(make_tracker(fake_github), tmp_path / "s.jsonl", console=console)
    assert {i.number: i.duplicate_of for i in snap.all_issues()} == {
        1: None,
        2: 1,
        3: None,
        4: None,
    }
    asked = [
        r
        for r in fake_github.requests
        if r.path == "/graphql" and "MarkedAsDuplicateEvent" in r.body["query"]
    ]
    assert [r.method for r in asked] == ["POST"]  # only #2: #3 was unmarked, #4 never marked
    assert asked[0].body["variables"] == {"owner": "octo", "name": "repo", "number": 2}
    assert "MarkedAsDuplicateEvent" in asked[0].body["query"]


def test_unmarked_after_marked_cancels():
    def ev(kind: str, minute: int, reason: str | None = None) -> Event:
        return Event(event=kind, created_at=at(minute), state_reason=reason)

    assert marked_duplicate([ev("marked_as_duplicate", 1)])
    assert marked_duplicate([ev("closed", 1, "duplicate")])
    assert not marked_duplicate([ev("marked_as_duplicate", 1), ev("unmarked_as_duplicate", 2)])
    assert not marked_duplicate([ev("closed", 1, "completed")])
    nodes = [
        {"__typename": "MarkedAsDuplicateEvent", "createdAt": "2024-01-02T00:00:00Z",
         "canonical": {"__typename": "Issue", "number": 9}},
        {"__typename": "MarkedAsDuplicateEvent", "createdAt": "2024-01-01T00:00:00Z",
         "canonical": {"__typename": "Issue", "number": 3}},
    ]  # fmt: skip
    data = {"data": {"repository": {"issue": {"timelineItems": {"nodes": nodes}}}}}
    assert canonical_from(data) == 9  # the last mark wins, whatever the order given
    pr = [{**nodes[0], "canonical": {"__typename": "PullRequest", "number": 4}}]
    data["data"]["repository"]["issue"]["timelineItems"]["nodes"] = pr
    assert canonical_from(data) is None
    assert canonical_from({"data": {"repository": None}}) is None


@pytest.mark.vcr
def test_recorded_graphql_request_shape(request: pytest.FixtureRequest, vcr) -> None:
    """Replays tests/cassettes/test_graphql_canonical/; to record it again, delete the file and
    run `pytest tests/test_graphql_canonical.py -k recorded --record-mode=once`."""
    recording = request.config.getoption("--record-mode") not in (None, "none")
    server = FakeGitHub(token=TOKEN, port=CASSETTE_PORT)
    button_repo(server)
    tracker = make_tracker(server, base_url=f"http://127.0.0.1:{CASSETTE_PORT}")
    if recording:
        server.start()
    try:
        assert tracker.duplicate_canonical(2) == 1
        assert tracker.duplicate_canonical(3) is None
    finally:
        server.stop()
    if not recording:
        assert vcr.all_played and vcr.play_count == 2
        sent = json.loads(vcr.requests[0].body)
        assert sent["variables"] == {"owner": "octo", "name": "repo", "number": 2}
        assert vcr.requests[0].uri == f"http://127.0.0.1:{CASSETTE_PORT}/graphql"
