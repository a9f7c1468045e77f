"""The live Action knows releases and discussions: one request for releases, discussions kept
beside the index and fetched by what changed (requests counted against the fake GitHub)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from issue_assistant.config.files import load_both
from issue_assistant.config.sections import Config, IndexConfig
from issue_assistant.decision import Decision
from issue_assistant.engines.fake import FakeEngine
from issue_assistant.index.local import index_path
from issue_assistant.live import analyze_live
from issue_assistant.sync import DISCUSSIONS_FILE
from issue_assistant.tracker import fetch_live
from issue_assistant.tracker.fetch_live import DiscussionStore
from issue_assistant.tracker.github_context import LIVE_DISCUSSIONS_QUERY
from issue_assistant.tracker.github_tracker import RELEASES_PAGE
from tests.fakegithub import FakeGitHub
from tests.fakegithub.fixtures import TOKEN, make_tracker

ROOT = Path(__file__).resolve().parents[1]
T0 = datetime(2024, 3, 1, tzinfo=UTC)
NOW = T0 + timedelta(days=40)
NO_ACCESS = {"message": "Resource not accessible by integration"}


def day(n: float) -> datetime:
    return T0 + timedelta(days=n)


def graphql(server: FakeGitHub) -> list:
    return [r for r in server.requests if r.path == "/graphql"]


def add_discussions(server: FakeGitHub, n: int, start: int = 0) -> None:
    for k in range(start, start + n):
        server.add_discussion(
            f"How to stream parquet {k}",
            f"Streaming parquet files question {k}",
            "carol",
            category="Q&A",
            created_at=day(k / 10),
        )


def test_releases_are_one_request_of_the_newest(fake_github: FakeGitHub) -> None:
    for k in range(40):
        fake_github.add_release(f"v1.{k}", day(k / 2), name=f"1.{k}")
    fake_github.add_release("v2.0-draft", None, draft=True)
    tracker = make_tracker(fake_github)
    releases = tracker.releases()
    assert tracker.releases() is releases  # read once per run
    asked = [r for r in fake_github.requests if r.path.endswith("/releases")]
    assert len(asked) == 1 and asked[0].query.get("per_page") == str(RELEASES_PAGE)
    # the first page holds the draft and the 29 newest published ones, newest first
    assert [r.tag for r in releases or []] == [f"v1.{k}" for k in range(39, 10, -1)]


def test_releases_without_access_are_unknown(fake_github: FakeGitHub) -> None:
    fake_github.fail_next("GET", r"/releases$", 403, body=NO_ACCESS)
    assert make_tracker(fake_github).releases() is None


def test_discussions_are_fetched_by_what_changed(fake_github: FakeGitHub, tmp_path) -> None:
    add_discussions(fake_github, 130)  # two pages of 100 at first
    store = tmp_path / DISCUSSIONS_FILE
    first = make_tracker(fake_github)
    first.keep_discussions(store)
    assert [d.number for d in first.discussions() or []] == list(range(1, 131))
    assert len(graphql(fake_github)) == 2
    assert graphql(fake_github)[0].body["query"] == LIVE_DISCUSSIONS_QUERY

    # the next run: one discussion answered, one new; one request of the most recent 20
    fake_github.clear_requests()
    fake_github.discussions[4].answer = "Use streaming=True."
    fake_github.discussions[4].answer_chosen_at = fake_github.discussions[4].updated_at = day(30)
    add_discussions(fake_github, 1, start=130)
    fake_github.discussions[-1].updated_at = day(31)
    second = make_tracker(fake_github)
    second.keep_discussions(store)
    known = {d.number: d for d in second.discussions() or []}
    assert len(known) == 131 and known[5].answered and known[5].answer == "Use streaming=True."
    sent = graphql(fake_github)
    assert len(sent) == 1 and sent[0].body["variables"]["first"] == fetch_live.HEAD_PAGE

    # nothing changed: still one request, nothing read but the page that shows it
    fake_github.clear_requests()
    third = make_tracker(fake_github)
    third.keep_discussions(store)
    assert len(third.discussions() or []) == 131 and len(graphql(fake_github)) == 1


def test_a_long_first_listing_goes_on_over_later_runs(
    fake_github: FakeGitHub, tmp_path, monkeypatch
) -> None:
    monkeypatch.setattr(fetch_live, "FULL_PAGE", 10)
    monkeypatch.setattr(fetch_live, "HEAD_PAGE", 5)
    monkeypatch.setattr(fetch_live, "FIRST_PAGES", 2)
    monkeypatch.setattr(fetch_live, "TAIL_PAGES", 1)
    add_discussions(fake_github, 45)
    sizes = []
    for _ in range(4):
        fake_github.clear_requests()
        tracker = make_tracker(fake_github)
        tracker.keep_discussions(tmp_path / DISCUSSIONS_FILE)
        sizes.append((len(tracker.discussions() or []), len(graphql(fake_github))))
    # 2 pages first (the 20 most recently updated), then 1 head + 1 older page per run
    assert sizes == [(20, 2), (30, 2), (40, 2), (45, 2)]
    assert DiscussionStore.load(tmp_path / DISCUSSIONS_FILE).tail is None
    fake_github.clear_requests()
    tracker = make_tracker(fake_github)
    tracker.keep_discussions(tmp_path / DISCUSSIONS_FILE)
    assert len(tracker.discussions() or []) == 45 and len(graphql(fake_github)) == 1


def test_discussions_off_are_none_and_refused_are_unknown(fake_github: FakeGitHub) -> None:
    add_discussions(fake_github, 3)
    fake_github.discussions_enabled = False
    assert make_tracker(fake_github).discussions() == []
    fake_github.discussions_enabled = True
    fake_github.fail_next("POST", r"^/graphql$", 403, body=NO_ACCESS)
    assert make_tracker(fake_github).discussions() is None


def test_an_unreadable_store_is_listed_again(fake_github: FakeGitHub, tmp_path) -> None:
    add_discussions(fake_github, 3)
    store = tmp_path / DISCUSSIONS_FILE
    store.write_text("{not json")
    tracker = make_tracker(fake_github)
    tracker.keep_discussions(store)
    assert len(tracker.discussions() or []) == 3
    assert json.loads(store.read_text())["version"] == fetch_live.STORE_VERSION


def run_live(server: FakeGitHub, cache: Path, number: int):
    config = Config(index=IndexConfig(cache_dir=str(cache)))
    labels = load_both(str(ROOT / "labels.toml"), None)[0]
    FakeEngine.enqueue(Decision(type="bug"))
    return analyze_live(
        "octo/repo",
        number,
        labels=labels,
        config=config,
        engine_name="fake",
        writes="live",
        tracker=make_tracker(server),
        now=NOW,
    )


def test_a_warm_live_run_knows_releases_and_discussions_within_ten_requests(tmp_path) -> None:
    with FakeGitHub("octo/repo", token=TOKEN) as server:
        for k in range(30):
            server.add_issue(f"Problem {k} loading csv", "It fails", f"u{k}", created_at=day(k))
        server.add_release("v2.1", day(20), name="2.1", body="Faster parquet.")
        add_discussions(server, 60)
        server.discussions[7].answer = "Pass streaming=True to load_dataset."
        server.discussions[7].answer_chosen_at = day(3)
        first = server.add_issue("Streaming parquet question", "How to stream parquet", "x")
        assert run_live(server, tmp_path, first).action == "posted"
        assert (index_path(tmp_path, "octo/repo") / DISCUSSIONS_FILE).is_file()

        new = server.add_issue("How to stream parquet files", "Streaming parquet question", "y")
        server.clear_requests()
        result = run_live(server, tmp_path, new)
        sent = [(r.method, r.path) for r in server.requests]
    assert result.action == "posted"
    assert len(sent) <= 10, sent
    assert sent.count(("POST", "/graphql")) == 1
    assert sum(p.endswith("/releases") for _, p in sent) == 1
    context = result.analysis.context
    files = context.files()
    assert "## `v2.1`: `2.1`" in files["releases.md"]
    assert "How to stream parquet" in files["discussions.md"]
    assert len(context.discussions) == 5


def test_a_live_run_without_access_to_either_still_posts(tmp_path) -> None:
    with FakeGitHub("octo/repo", token=TOKEN) as server:
        number = server.add_issue("Crash on load", "Traceback", "x", created_at=day(1))
        server.fail_next("GET", r"/releases$", 404)
        server.fail_next("POST", r"^/graphql$", 403, body=NO_ACCESS)
        result = run_live(server, tmp_path, number)
    assert result.action == "posted"
    files = result.analysis.context.files()
    assert "Not known" in files["releases.md"] and "Not known" in files["discussions.md"]


def test_a_repository_without_discussions_says_none(tmp_path) -> None:
    with FakeGitHub("octo/repo", token=TOKEN) as server:
        server.discussions_enabled = False
        number = server.add_issue("Crash on load", "Traceback", "x", created_at=day(1))
        result = run_live(server, tmp_path, number)
    assert "None found." in result.analysis.context.files()["discussions.md"]
    assert "None: no release" in result.analysis.context.files()["releases.md"]


def test_a_live_run_warns_of_a_label_the_repository_lacks_at_no_request_more(
    tmp_path, caplog
) -> None:
    from issue_assistant.config.labels import LabelsConfig

    labels = LabelsConfig.model_validate({"type": [{"name": "bug"}, {"name": "enhancment"}]})
    with FakeGitHub("octo/repo", token=TOKEN) as server:
        for name in ("bug", "enhancement", "question"):
            server.add_label(name)
        number = server.add_issue("Crash on load", "Traceback", "x", created_at=day(1))
        FakeEngine.enqueue(Decision(type="bug"))
        config = Config(index=IndexConfig(cache_dir=str(tmp_path)))
        result = analyze_live(
            "octo/repo", number, labels=labels, config=config, engine_name="fake",
            writes="live", tracker=make_tracker(server), now=NOW,
        )  # fmt: skip
        sent = [(r.method, r.path) for r in server.requests]
    assert result.action == "posted"
    [warning] = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert warning.startswith("labels.toml names `enhancment`, a label octo/repo does not have")
    assert "(did you mean `enhancement`?)" in warning
    assert sum(p.endswith("/labels") and m == "GET" for m, p in sent) == 1  # read once, as before
