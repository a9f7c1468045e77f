"""fetch_snapshot and the `snapshot` command against the fake GitHub, and a replayed cassette."""

from __future__ import annotations

import io
import json
import re
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest
from rich.console import Console

from issue_assistant.cli import main
from issue_assistant.errors import GitHubError
from issue_assistant.tracker import fetch
from issue_assistant.tracker.client import Throttle
from issue_assistant.tracker.fetch import fetch_snapshot, partial_path
from issue_assistant.tracker.snapshot import read_snapshot
from tests.fakegithub import FakeGitHub, fixtures
from tests.fakegithub.fixtures import TOKEN, make_tracker

fake_github = fixtures.fake_github

POETRY = Path(__file__).resolve().parents[2] / "shared" / "data" / "poetry-sample.jsonl.gz"
FETCHED_AT = datetime(2025, 4, 1, tzinfo=UTC)
T0 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)
CASSETTE_PORT = 18765


@pytest.fixture
def vcr_config() -> dict:
    return {"allowed_hosts": ["127.0.0.1"], "filter_headers": ["authorization"]}


def quiet() -> Console:
    return Console(file=io.StringIO(), force_terminal=False, width=100)


def at(minutes: int) -> datetime:
    return T0.replace(hour=12 + minutes // 60, minute=minutes % 60)


def small_repo(server: FakeGitHub) -> None:
    """Five issues and a pull request: labels, closes, duplicates, roles."""
    server.add_label("bug", "d73a4a", "Something isn't working")
    server.add_label("duplicate", "cfd3d7", None)
    server.set_permission("maint", "maintain")
    server.set_permission("tri", "triage")
    server.set_permission("reader", "read")
    one = server.add_issue("Crash on start", "boom", "alice", created_at=at(0), labels=["bug"])
    server.add_event(one, "labeled", "tri", created_at=at(1), label="bug")
    two = server.add_issue(
        "Crashes when starting",
        "boom too",
        "bob",
        created_at=at(10),
        labels=["duplicate"],
        state="closed",
        state_reason="duplicate",
        closed_at=at(13),
    )
    server.add_comment(
        two, "Duplicate of #1", "maint", created_at=at(12), author_association="MEMBER"
    )
    server.add_event(two, "marked_as_duplicate", "maint", created_at=at(12))
    server.add_event(two, "labeled", "maint", created_at=at(12), label="duplicate")
    server.add_event(two, "closed", "maint", created_at=at(13), state_reason="duplicate")
    three = server.add_issue("Also a crash", "", "carol", created_at=at(20))
    server.add_comment(three, "Duplicate of #1", "reader", created_at=at(21))  # no write access
    four = server.add_issue("Crash again", None, "dave", created_at=at(30))
    server.add_comment(
        four, "duplicate of https://github.com/octo/repo/issues/1", "maint", created_at=at(31)
    )
    server.add_event(four, "unmarked_as_duplicate", "maint", created_at=at(32))
    five = server.add_issue("Docs typo", "tpyo", "erin", created_at=at(40), is_pull_request=True)
    server.add_event(five, "labeled", "renovate[bot]", created_at=at(41), label="bug")
    six = server.add_issue("Closed by its author", "", "frank", created_at=at(50))
    server.add_comment(six, "DUPLICATE OF #2\n\nsorry", "tri", created_at=at(51))
    server.add_event(six, "closed", "frank", created_at=at(52), state_reason="completed")


def test_round_trip_of_the_poetry_sample(fake_github: FakeGitHub, tmp_path: Path) -> None:
    source = read_snapshot(POETRY)
    fake_github.load_snapshot(source)
    out = tmp_path / "poetry.jsonl.gz"

    fetch_snapshot(make_tracker(fake_github), out, console=quiet(), fetched_at=FETCHED_AT)

    back = read_snapshot(out)
    assert back.repository.full_name == "python-poetry/poetry"
    assert back.repository.fetched_at == FETCHED_AT
    assert back.repository.maintainers == source.repository.maintainers
    assert [lb.name for lb in back.repository.labels] == [
        lb.name for lb in source.repository.labels
    ]
    assert len(back) == len(source) == 109
    fields = [
        "title",
        "body",
        "user",
        "author_association",
        "created_at",
        "closed_at",
        "state",
        "state_reason",
        "labels",
        "is_pull_request",
    ]
    for want in source.all_issues():
        got = back.get_issue(want.number)
        assert got.model_dump(include=set(fields)) == want.model_dump(include=set(fields))
        key = lambda e: (e.created_at, e.event, e.label or "")  # noqa: E731
        assert [e.model_dump(exclude={"canonical"}) for e in sorted(got.events or [], key=key)] == [
            e.model_dump(exclude={"canonical"}) for e in sorted(want.events or [], key=key)
        ]
        assert [c.model_dump(exclude={"id"}) for c in got.comments or []] == [
            c.model_dump(exclude={"id"})
            for c in sorted(want.comments or [], key=lambda c: c.created_at)
        ]
        assert all(c.id is not None and c.url is None for c in got.comments or [])
    assert not partial_path(out).exists()
    lookups = Counter(p for p in fake_github.paths() if p.endswith("/permission"))
    assert set(lookups.values()) == {1}  # each actor looked up once
    timelines = [p for p in fake_github.paths() if p.endswith("/timeline")]
    assert len(timelines) == 109
    # GraphQL only for issues marked as duplicates that no "Duplicate of" comment resolved
    graphql = [
        r
        for r in fake_github.requests
        if r.path == "/graphql" and "MarkedAsDuplicateEvent" in r.body["query"]
    ]
    marked = [i for i in back.all_issues() if fetch.marked_duplicate(i.events or [])]
    assert 0 < len(graphql) <= len(marked)
    # repo, labels, list, timelines, roles, GraphQL originals, then releases and discussions
    assert len(fake_github.requests) == 2 + 2 + 109 + len(lookups) + len(graphql) + 2


def test_duplicates_and_maintainers_come_from_roles(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    small_repo(fake_github)

    snap = fetch_snapshot(
        make_tracker(fake_github), tmp_path / "s.jsonl", console=quiet(), fetched_at=FETCHED_AT
    )

    assert snap.repository.maintainers == ["maint", "tri"]
    assert {i.number: i.duplicate_of for i in snap.all_issues()} == {
        1: None,
        2: 1,
        3: None,
        4: None,
        5: None,
        6: None,  # 3: reader; 4: unmarked; 6: triage
    }
    looked_up = {p.split("/")[-2] for p in fake_github.paths() if p.endswith("/permission")}
    assert looked_up == {"tri", "maint", "reader", "frank"}  # actors and "Duplicate of" authors
    assert snap.get_issue(5).is_pull_request
    assert [e.event for e in snap.get_issue(2).events or []] == [
        "marked_as_duplicate",
        "labeled",
        "closed",
    ]
    assert read_snapshot(tmp_path / "s.jsonl").get_issue(2).duplicate_of == 1


def test_resume_after_a_failure_gives_the_same_file(tmp_path: Path) -> None:
    whole, resumed = tmp_path / "whole.jsonl", tmp_path / "resumed.jsonl"
    with FakeGitHub(token=TOKEN) as server:
        small_repo(server)
        for n in range(7, 60):
            server.add_issue(f"issue {n}", f"body {n}", "alice", created_at=at(60 + n))
            server.add_event(n, "labeled", "maint", created_at=at(61 + n), label="bug")
        fetch_snapshot(make_tracker(server), whole, console=quiet(), fetched_at=FETCHED_AT)

        server.clear_requests()
        server.fail_next("GET", r"/issues/40/timeline$", 500, times=4)  # 1 + 3 retries
        with pytest.raises(GitHubError) as err:
            fetch_snapshot(make_tracker(server), resumed, console=quiet(), fetched_at=FETCHED_AT)
        assert err.value.status == 500 and err.value.path.endswith("/issues/40/timeline")
        assert not resumed.exists()
        partial = partial_path(resumed)
        kinds = Counter(json.loads(line)["kind"] for line in partial.read_text().splitlines())
        listed = kinds.pop("listed")
        assert kinds == {"partial": 1, "listing": 1, "issue": 39, "permission": 4}
        assert listed == len(read_snapshot(whole))  # every issue, listed once
        assert not server.failures
        with partial.open("a") as fh:
            fh.write('{"kind": "issue", "number": 4')  # a line cut short by the crash

        server.clear_requests()
        fetch_snapshot(make_tracker(server), resumed, console=quiet(), fetched_at=datetime.now(UTC))

        timelines = [p for p in server.paths() if p.endswith("/timeline")]
        assert timelines == [f"/repos/octo/repo/issues/{n}/timeline" for n in range(40, 60)]
        assert "/repos/octo/repo/issues" not in server.paths()  # the listing was kept
        assert not [p for p in server.paths() if p.endswith("/permission")]
    assert resumed.read_bytes() == whole.read_bytes()
    assert not partial.exists()


def test_no_resume_starts_over(fake_github: FakeGitHub, tmp_path: Path) -> None:
    small_repo(fake_github)
    out = tmp_path / "s.jsonl"
    partial_path(out).write_text(
        '{"kind": "partial", "version": 1, "full_name": "octo/repo", "fetched_at": '
        '"2020-01-01T00:00:00Z"}\n{"kind": "issue", "number": 1, "title": "stale", '
        '"user": {"login": "x"}, "created_at": "2020-01-01T00:00:00Z"}\n'
    )

    snap = fetch_snapshot(make_tracker(fake_github), out, resume=False, console=quiet())

    assert snap.get_issue(1).title == "Crash on start"
    assert snap.repository.fetched_at.year > 2020
    assert len([p for p in fake_github.paths() if p.endswith("/timeline")]) == 6


def test_progress_is_plain_lines_off_a_terminal(
    fake_github: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A line every ten seconds (here: every 0.4 s of a fake clock, one issue a tick) for the
    listing and the issues, with the time remaining; the steps' own lines around them."""
    from issue_assistant import progress

    for n in range(1, 6):
        fake_github.add_issue(f"issue {n}")
    ticks = iter(range(10_000))
    monkeypatch.setattr(progress, "_now", lambda: next(ticks) * 0.1)
    monkeypatch.setattr(progress, "EVERY", 0.4)
    console = quiet()

    fetch_snapshot(make_tracker(fake_github), tmp_path / "s.jsonl", console=console)

    lines = console.file.getvalue().splitlines()  # type: ignore[attr-defined]
    assert lines[0] == "listing issues of octo/repo"
    assert [ln for ln in lines if ln.startswith("listed: ")][-1].startswith("listed: 5 done in")
    assert "5 issues and pull requests, 0 already fetched" in lines
    fetched = [ln for ln in lines if ln.startswith("fetched: ")]
    assert re.fullmatch(r"fetched: \d/5 #\d elapsed 0:0\d( remaining ~0:0\d)?", fetched[0])
    assert fetched[-1].startswith("fetched: 5/5 done in ")
    assert lines[-3:-1] == ["0 releases", "0 discussions"]
    assert lines[-1].startswith("wrote ") and lines[-1].endswith("5 issues and pull requests")


def test_progress_bar_on_a_terminal(fake_github: FakeGitHub, tmp_path: Path) -> None:
    fake_github.add_issue("one")
    console = Console(file=io.StringIO(), force_terminal=True, width=100)

    fetch_snapshot(make_tracker(fake_github), tmp_path / "s.jsonl", console=console)

    assert "1/1" in console.file.getvalue()  # type: ignore[attr-defined]


def test_snapshot_command(
    fake_github: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    small_repo(fake_github)
    monkeypatch.setattr(fetch, "FETCH_THROTTLE", Throttle(0, 0))
    out = tmp_path / "octo.jsonl.gz"
    argv = ["snapshot", "octo/repo", "-o", str(out), "--base-url", fake_github.base_url]

    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    assert main(argv) == 2
    assert "no GitHub token: set GITHUB_TOKEN or GH_TOKEN" in capsys.readouterr().err

    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    assert main(argv) == 0
    assert "5 issues and 1 pull requests, 2 maintainers" in capsys.readouterr().out
    assert len(read_snapshot(out)) == 6

    assert (
        main(
            [
                "snapshot",
                "-R",
                "octo/missing",
                "-o",
                str(tmp_path / "x.jsonl"),
                "--base-url",
                fake_github.base_url,
            ]
        )
        == 2
    )
    assert "octo/missing: no such repository" in capsys.readouterr().err


@pytest.mark.vcr
def test_recorded_fetch_replays_offline(
    request: pytest.FixtureRequest, tmp_path: Path, vcr
) -> None:
    """Replays tests/cassettes/test_fetch_snapshot/; to record it again, delete the file and run
    `pytest tests/test_fetch_snapshot.py -k recorded --record-mode=once` (fake server, fixed port).
    """
    recording = request.config.getoption("--record-mode") not in (None, "none")
    server = FakeGitHub(token=TOKEN, port=CASSETTE_PORT)
    small_repo(server)
    tracker = make_tracker(server, base_url=f"http://127.0.0.1:{CASSETTE_PORT}")
    if recording:
        server.start()
    try:
        snap = fetch_snapshot(tracker, tmp_path / "s.jsonl", console=quiet(), fetched_at=FETCHED_AT)
    finally:
        server.stop()

    assert snap.repository.maintainers == ["maint", "tri"]
    assert {i.number: i.duplicate_of for i in snap.all_issues()} == {
        1: None,
        2: 1,
        3: None,
        4: None,
        5: None,
        6: None,
    }
    assert [c.body for c in snap.get_issue(2).comments or []] == ["Duplicate of #1"]
    if not recording:
        assert vcr.all_played and vcr.play_count == 15  # repo, labels, list, 6 timelines, 4 roles,
        # releases and discussions
        headers = [{k.lower() for k in r.headers} for r in vcr.requests]
        assert headers and all("authorization" not in h for h in headers)


def test_a_listing_cut_short_goes_on_from_where_it_stopped(tmp_path: Path) -> None:
    """A failure on the listing's third page: the next run lists from the last update time it
    kept (inclusive), not from the start, and the snapshot is the same as in one go."""
    whole, resumed = tmp_path / "whole.jsonl", tmp_path / "resumed.jsonl"
    with FakeGitHub(token=TOKEN) as server:
        small_repo(server)
        for n in range(7, 60):
            server.add_issue(f"issue {n}", f"body {n}", "alice", created_at=at(60 + n))
        tracker = make_tracker(server, per_page=10)
        fetch_snapshot(tracker, whole, console=quiet(), fetched_at=FETCHED_AT)
        server.clear_requests()
        calls = {"n": 0}

        def count() -> None:
            calls["n"] += 1
            if calls["n"] == 3:
                server.fail_next("GET", r"/repos/octo/repo/issues$", 500, times=4)
            else:
                server.before("GET", r"/repos/octo/repo/issues$", count)

        server.before("GET", r"/repos/octo/repo/issues$", count)
        with pytest.raises(GitHubError):
            fetch_snapshot(make_tracker(server, per_page=10), resumed, console=quiet(),
                           fetched_at=FETCHED_AT)  # fmt: skip
        server.clear_requests()
        fetch_snapshot(make_tracker(server, per_page=10), resumed, console=quiet())
        pages = [r.query for r in server.requests if r.path == "/repos/octo/repo/issues"]
        assert pages[0].get("since") and len(pages) == 4  # the 40 issues from the 20th on
    assert resumed.read_bytes() == whole.read_bytes()
