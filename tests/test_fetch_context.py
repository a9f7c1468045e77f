"""`snapshot` saves releases (REST), discussions (GraphQL) and fixing PRs' files, resumably."""

from __future__ import annotations

import io
import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from rich.console import Console

from issue_assistant.errors import GitHubError
from issue_assistant.tracker.fetch import fetch_snapshot, partial_path
from issue_assistant.tracker.github_context import DISCUSSIONS_QUERY, closed_by, closed_by_query
from issue_assistant.tracker.snapshot import read_snapshot
from tests.fakegithub import FakeGitHub
from tests.fakegithub.fixtures import TOKEN, make_tracker

T0 = datetime(2025, 2, 1, tzinfo=UTC)
FETCHED_AT = datetime(2025, 6, 1, tzinfo=UTC)
CASSETTE_PORT = 18766


@pytest.fixture
def vcr_config() -> dict:
    return {
        "allowed_hosts": ["127.0.0.1"],
        "filter_headers": ["authorization"],
        "match_on": ["method", "uri", "body"],
    }


def quiet() -> Console:
    return Console(file=io.StringIO(), force_terminal=False, width=100)


def day(n: float) -> datetime:
    return T0 + timedelta(days=n)


def repo_with_context(server: FakeGitHub, discussions: int = 3) -> None:
    server.set_permission("maint", "maintain")
    server.add_issue(
        "Crash on empty input",
        "boom",
        "alice",
        created_at=day(1),
        state="closed",
        state_reason="completed",
    )
    pr = server.add_issue(
        "Fix the crash",
        "This fixes #1.\n\nAlso closes #99.",
        "maint",
        created_at=day(2),
        is_pull_request=True,
        state="closed",
    )
    server.set_pull_files(pr, ["src/parse.py", "tests/test_parse.py"])
    server.add_issue("Open one", "Fixes #1 someday", "bob", created_at=day(3), is_pull_request=True)
    # #4 was fixed by #5, linked in the sidebar only (no "Fixes #4" anywhere)
    four = server.add_issue(
        "Slow on big files", "", "dave", created_at=day(3), state="closed", state_reason="completed"
    )
    five = server.add_issue(
        "Speed up reading", "", "maint", created_at=day(4), is_pull_request=True, state="closed"
    )
    server.set_pull_files(five, ["src/read.py"])
    server.link_closing_pull(four, five)
    server.link_closing_pull(four, 3, merged=False)  # linked but never merged
    server.link_closing_pull(1, pr)  # also "Fixes #1": one fixing pull request, not two
    server.link_closing_pull(1, 8, repository="octo/other")  # another repository's #8
    server.add_release("v0.9", day(0), name="0.9", body="Old.")
    server.add_release("v1.0", day(5), name="1.0", body="Notes " * 1000)
    server.add_release("v1.1-draft", None, draft=True)
    for n in range(discussions):
        server.add_discussion(
            f"Question {n}",
            f"How do I do thing {n}?",
            "carol",
            category="Q&A",
            created_at=day(n),
            answer="Like this." if n == 0 else None,
            answer_chosen_at=day(n + 1) if n == 0 else None,
            closed_at=day(n + 2) if n == 1 else None,
        )


def test_snapshot_has_releases_discussions_and_fixed_by(tmp_path: Path) -> None:
    with FakeGitHub(token=TOKEN) as server:
        repo_with_context(server)
        snap = fetch_snapshot(
            make_tracker(server),
            tmp_path / "s.jsonl",
            console=quiet(),
            fetched_at=FETCHED_AT,
            fixed_by=True,
        )
        files = [p for p in server.paths() if p.endswith("/files")]
    # the open PR, #99, the unmerged link and the other repository's PR are not followed
    assert files == ["/repos/octo/repo/pulls/2/files", "/repos/octo/repo/pulls/5/files"]
    back = read_snapshot(tmp_path / "s.jsonl")
    assert back.repository.includes == ["releases", "discussions", "fixed_by"]
    assert [r.tag for r in back.releases() or []] == ["v1.0", "v0.9"]  # no draft
    assert len(back.releases()[0].notes) <= 2002 and back.releases()[0].notes.endswith("…")
    ds = back.discussions() or []
    assert [(d.number, d.category, d.answered, d.closed) for d in ds] == [
        (1, "Q&A", True, False),
        (2, "Q&A", False, True),
        (3, "Q&A", False, False),
    ]
    assert ds[0].answer == "Like this." and ds[0].user.login == "carol"
    assert [(f.number, f.files) for f in back.get_issue(1).fixed_by or []] == [
        (2, ["src/parse.py", "tests/test_parse.py"])
    ]
    assert back.get_issue(3).fixed_by is None
    assert [(f.number, f.files) for f in back.get_issue(4).fixed_by or []] == [(5, ["src/read.py"])]
    assert snap.releases() == back.releases()


def test_without_fixed_by_no_pull_request_files_are_asked(tmp_path: Path) -> None:
    with FakeGitHub(token=TOKEN) as server:
        repo_with_context(server)
        snap = fetch_snapshot(make_tracker(server), tmp_path / "s.jsonl", console=quiet())
        assert not [p for p in server.paths() if p.endswith("/files")]
    assert snap.repository.includes == ["releases", "discussions"]
    assert snap.get_issue(1).fixed_by is None


def test_discussions_resume_after_the_last_page_fetched(tmp_path: Path) -> None:
    whole, resumed = tmp_path / "whole.jsonl", tmp_path / "resumed.jsonl"
    with FakeGitHub(token=TOKEN) as server:
        repo_with_context(server, discussions=120)  # three pages of 50
        fetch_snapshot(make_tracker(server), whole, console=quiet(), fetched_at=FETCHED_AT)
        whole_issues = list(read_snapshot(whole).all_issues())
        pages = [r for r in server.requests if r.path == "/graphql"]
        assert [r.body["variables"]["after"] is None for r in pages] == [True, False, False]

        server.clear_requests()
        failure = server.fail_next("POST", r"^/graphql$", 502, times=4)  # 1 + 3 retries
        calls = {"n": 0}

        def after_the_first_page(method: str, path: str) -> bool:
            calls["n"] += method == "POST" and path == "/graphql"
            return method == "POST" and path == "/graphql" and calls["n"] > 1

        failure.matches = after_the_first_page  # type: ignore[method-assign]
        # an optional part that fails is unknown: the snapshot is written without it, and the
        # partial file is kept so that the same command fetches only what is missing
        first = fetch_snapshot(
            make_tracker(server), resumed, console=quiet(), fetched_at=FETCHED_AT
        )
        assert first.discussions() is None and "discussions" not in first.repository.includes
        assert read_snapshot(resumed).discussions() is None and len(first) == len(whole_issues)
        partial = partial_path(resumed)
        kinds = [json.loads(line)["kind"] for line in partial.read_text().splitlines()]
        assert kinds.count("discussion") == 50 and kinds.count("release") == 2
        server.failures.clear()

        server.clear_requests()
        fetch_snapshot(make_tracker(server), resumed, console=quiet(), fetched_at=FETCHED_AT)
        pages = [r for r in server.requests if r.path == "/graphql"]
        assert len(pages) == 2 and pages[0].body["variables"]["after"] is not None
        assert not [p for p in server.paths() if p.endswith("/releases")]
        assert not [p for p in server.paths() if p.endswith("/timeline")]
    assert resumed.read_bytes() == whole.read_bytes()
    assert not partial.exists()


def test_closing_links_are_asked_in_batches_and_resume(tmp_path: Path) -> None:
    whole, resumed = tmp_path / "whole.jsonl", tmp_path / "resumed.jsonl"
    with FakeGitHub(token=TOKEN) as server:
        for n in range(1, 121):
            closed = {"state": "closed", "state_reason": "completed"}
            server.add_issue(f"Bug {n}", "", "alice", created_at=day(n / 100), **closed)
        server.add_issue("Not a bug", "", "bob", created_at=day(2), state="closed",
                         state_reason="not_planned")  # fmt: skip
        pr = server.add_issue("Fix", "", "maint", created_at=day(3), is_pull_request=True)
        server.set_pull_files(pr, ["src/a.py"])
        server.link_closing_pull(77, pr)

        def asked() -> list[list[int]]:
            queries = [r.body["query"] for r in server.requests if r.path == "/graphql"]
            return [
                [int(n) for n in re.findall(r"issue\(number: (\d+)\)", q)]
                for q in queries
                if "closedByPullRequestsReferences" in q
            ]

        fetch_snapshot(
            make_tracker(server), whole, console=quiet(), fetched_at=FETCHED_AT, fixed_by=True
        )
        assert asked() == [list(range(1, 51)), list(range(51, 101)), list(range(101, 121))]

        server.clear_requests()
        calls = {"n": 0}
        failure = server.fail_next("POST", r"^/graphql$", 502, times=4)

        def the_second_batch(method: str, path: str) -> bool:
            if method != "POST" or path != "/graphql":
                return False
            current = server.requests[-1]  # logged before the failures are looked at
            calls["n"] += "closedBy" in current.body["query"]
            return calls["n"] > 1

        failure.matches = the_second_batch  # type: ignore[method-assign]
        first = fetch_snapshot(
            make_tracker(server), resumed, console=quiet(), fetched_at=FETCHED_AT, fixed_by=True
        )
        assert "fixed_by" not in first.repository.includes  # unknown, the rest written
        server.failures.clear()
        server.clear_requests()
        fetch_snapshot(
            make_tracker(server), resumed, console=quiet(), fetched_at=FETCHED_AT, fixed_by=True
        )
        assert asked() == [list(range(51, 101)), list(range(101, 121))]
    assert resumed.read_bytes() == whole.read_bytes()
    assert [f.number for f in read_snapshot(whole).get_issue(77).fixed_by or []] == [pr]


def test_an_issue_gone_since_the_listing_leaves_the_others_linked(fake_github: FakeGitHub):
    one = fake_github.add_issue("Bug", "", "alice", state="closed", state_reason="completed")
    pr = fake_github.add_issue("Fix", "", "maint", is_pull_request=True, state="closed")
    fake_github.link_closing_pull(one, pr)
    tracker = make_tracker(fake_github)
    assert closed_by(tracker, [one, 999]) == {one: [pr]}  # #999: null and NOT_FOUND
    refused = {
        "data": None,
        "errors": [{"type": "FORBIDDEN", "message": "Resource not accessible"}],
    }
    fake_github.fail_next("POST", r"^/graphql$", 200, body=refused)
    with pytest.raises(GitHubError, match="Resource not accessible"):
        closed_by(tracker, [one])


@pytest.mark.vcr
def test_recorded_graphql_shape_replays_offline(
    request: pytest.FixtureRequest, tmp_path: Path, vcr
) -> None:
    """Replays tests/cassettes/test_fetch_context/; to record it again, delete the file and run
    `pytest tests/test_fetch_context.py -k recorded --record-mode=once` (fake server, fixed port).
    """
    recording = request.config.getoption("--record-mode") not in (None, "none")
    server = FakeGitHub(token=TOKEN, port=CASSETTE_PORT)
    repo_with_context(server)
    tracker = make_tracker(server, base_url=f"http://127.0.0.1:{CASSETTE_PORT}")
    if recording:
        server.start()
    try:
        snap = fetch_snapshot(
            tracker, tmp_path / "s.jsonl", console=quiet(), fetched_at=FETCHED_AT, fixed_by=True
        )
    finally:
        server.stop()
    assert [d.number for d in snap.discussions() or []] == [1, 2, 3]
    assert snap.get_issue(1).fixed_by[0].files == ["src/parse.py", "tests/test_parse.py"]
    assert [f.number for f in snap.get_issue(4).fixed_by or []] == [5]
    if not recording:
        assert vcr.all_played
        posts = [r for r in vcr.requests if r.method == "POST"]
        assert [r.uri for r in posts] == [f"http://127.0.0.1:{CASSETTE_PORT}/graphql"] * 2
        sent = json.loads(posts[0].body)
        assert sent["query"] == DISCUSSIONS_QUERY
        assert sent["variables"] == {"owner": "octo", "name": "repo", "first": 50, "after": None}
        # every closed issue in one query, one alias each: the sidebar's closing pull requests
        sent = json.loads(posts[1].body)
        assert sent["query"] == closed_by_query([1, 4])
        assert (
            "i4: issue(number: 4) { number closedByPullRequestsReferences(first: 5)"
            in (sent["query"])
        )
        assert sent["variables"] == {"owner": "octo", "name": "repo"}
        assert all("authorization" not in {k.lower() for k in r.headers} for r in vcr.requests)
