"""A live first build of a large repository against the fake GitHub with a rate limit: each run
keeps its resume point, stops listing with requests to spare, still posts its comment, and says
how much of the tracker it searched; the cache directory given is the one used."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from issue_assistant import live, sync
from issue_assistant.action import render_summary
from issue_assistant.cli import main
from issue_assistant.config.labels import load_labels
from issue_assistant.config.sections import Config, IndexConfig
from issue_assistant.index import IssueIndex
from issue_assistant.index.local import index_path
from tests.fakegithub import FakeGitHub
from tests.fakegithub.fixtures import TOKEN, make_tracker

ROOT = Path(__file__).resolve().parents[1]
T0 = datetime(2024, 3, 1, tzinfo=UTC)
ISSUES = 400
PAGE = 20


@pytest.fixture
def gh():
    with FakeGitHub("octo/repo", token=TOKEN) as server:
        for i in range(1, ISSUES + 1):
            bug = i % 2 or i == ISSUES
            server.add_issue(
                f"Crash reading parquet shard {i % 7}" if bug else f"Support writing shard {i % 7}",
                f"Reading shard {i % 7} crashes with a traceback, error {i}."
                if bug
                else f"Please add an option to write shard {i % 7} as parquet ({i}).",
                f"user{i}",
                labels=[] if i == ISSUES else ["bug"] if bug else ["enhancement"],
                created_at=T0 + timedelta(hours=i),
                updated_at=T0 + timedelta(hours=i, minutes=5),
            )
        yield server


def listing_pages(server: FakeGitHub) -> list[dict[str, str]]:
    return [r.query for r in server.requests if r.path == "/repos/octo/repo/issues"]


def run(server: FakeGitHub, cache: Path, number: int) -> live.LiveResult:
    return live.analyze_live(
        "octo/repo",
        number,
        labels=load_labels(ROOT / "labels.toml"),
        config=Config(index=IndexConfig(cache_dir=str(cache))),
        engine_name="similar",
        writes="live",
        tracker=make_tracker(server, per_page=PAGE),
        now=T0 + timedelta(days=60),
    )


def test_a_rate_limited_first_build_resumes_where_it_stopped(gh, tmp_path, monkeypatch):
    monkeypatch.setattr(sync, "LIST_CHUNK", PAGE)
    monkeypatch.setattr(sync, "RATE_MARGIN", 12)
    cache = tmp_path / "cache"
    path = index_path(cache, "octo/repo")

    # Run 1: 22 requests left this hour. The listing stops with 12 to spare; the comment is
    # still posted, from the part indexed, and says so.
    gh.limit_rate(22)
    first = run(gh, cache, ISSUES)
    assert first.action == "posted"
    indexed = len(IssueIndex(path))
    assert 0 < indexed < ISSUES and IssueIndex(path).building
    assert (path / sync.CURSOR_FILE).is_file() and not (path / sync.SYNC_FILE).exists()
    assert gh.rate_remaining is not None and gh.rate_remaining > 0
    notice = f"searched {indexed:,} of about {ISSUES:,} issues and pull requests so far"
    assert notice in first.comment
    assert first.plan is not None and first.plan.index_progress is not None
    # an older issue's number (a backlog run) does not shrink the estimate below what is indexed
    assert sync.index_progress(IssueIndex(path), 3).of_about == indexed  # #1..#indexed listed
    summary = render_summary(
        command="analyze",
        writes="live",
        result=first,
        done=first.done,
        repository="octo/repo",
    )
    assert f"still being built: {indexed:,} of about {ISSUES:,}" in summary

    # Run 2, in the same hour, starts under the margin: it lists nothing and still posts.
    new = gh.add_issue(
        "Crash reading parquet shard 3 again", "Reading shard 3 crashes with a traceback.", "newbie"
    )
    gh.clear_requests()
    gh.limit_rate(15)
    second = run(gh, cache, new)
    assert second.action == "posted" and listing_pages(gh) == []
    assert len(IssueIndex(path)) == indexed  # the new issue was read by its number

    # Run 3, after the reset: goes on from the resume point (no page listed twice) and
    # completes the build; the comment no longer carries the notice.
    gh.clear_requests()
    gh.limit_rate(1000)
    third = run(gh, cache, new)
    pages = listing_pages(gh)
    assert pages and all(p.get("since") for p in pages)
    assert len(pages) <= (ISSUES + 1 - indexed) // PAGE + 2
    index = IssueIndex(path)
    assert len(index) == ISSUES + 1 and not index.building
    assert (path / sync.SYNC_FILE).is_file() and not (path / sync.CURSOR_FILE).exists()
    assert "still being built" not in third.comment
    assert third.plan is not None and third.plan.index_progress is None
    # the label model fit in run 1 on the part indexed then is refit on the whole history
    assert "a label model fit now (no label model saved" in first.decision["calibration"]
    assert "the saved label model" in second.decision["calibration"]
    assert "refit: the index now holds" in third.decision["calibration"]
    assert f"fit on {ISSUES - 1} labelled issues" in third.decision["calibration"]


def test_a_rate_limit_in_the_middle_of_the_listing_keeps_every_chunk(gh, tmp_path, monkeypatch):
    """GitHub answers 403 (rate limit, the reset an hour away) on the third page: the two chunks
    listed stay indexed with their resume point, and the comment is posted from them."""
    monkeypatch.setattr(sync, "LIST_CHUNK", PAGE)
    cache = tmp_path / "cache"
    path = index_path(cache, "octo/repo")
    calls = {"n": 0}

    def count() -> None:
        calls["n"] += 1
        if calls["n"] == 3:
            gh.fail_primary_rate_limit("GET", r"/repos/octo/repo/issues$")
        else:
            gh.before("GET", r"/repos/octo/repo/issues$", count)

    gh.before("GET", r"/repos/octo/repo/issues$", count)
    result = run(gh, cache, ISSUES)
    assert result.action == "posted"
    assert len(IssueIndex(path)) == 2 * PAGE
    resume = datetime.fromisoformat((path / sync.CURSOR_FILE).read_text())
    assert resume == T0 + timedelta(hours=2 * PAGE, minutes=5)  # the last committed update
    gh.clear_requests()
    run(gh, cache, ISSUES)
    pages = listing_pages(gh)
    assert pages[0]["since"] == "2024-03-02T16:05:00Z"  # from the resume point, inclusive
    assert len(IssueIndex(path)) == ISSUES


def test_a_refused_token_during_the_listing_still_fails_the_run(gh, tmp_path):
    gh.fail_next("GET", r"/repos/octo/repo/issues$", 401)
    from issue_assistant.errors import GitHubError

    with pytest.raises(GitHubError):
        run(gh, tmp_path / "cache", ISSUES)


def test_live_analyze_keeps_the_index_where_it_is_told(gh, tmp_path, monkeypatch, capsys):
    """`analyze OWNER/REPO#N --cache-dir DIR`, then $ISSUE_ASSISTANT_CACHE: never ./.cache."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    monkeypatch.setenv("GITHUB_API_URL", gh.base_url)
    monkeypatch.delenv("ISSUE_ASSISTANT_CACHE", raising=False)
    labels = str(ROOT / "labels.toml")
    flag = tmp_path / "from-flag"
    args = ["analyze", f"octo/repo#{ISSUES}", "--labels", labels, "--engine", "similar"]
    assert main([*args, "--cache-dir", str(flag)]) == 0
    assert len(IssueIndex(index_path(flag, "octo/repo"))) == ISSUES
    env = tmp_path / "from-env"
    monkeypatch.setenv("ISSUE_ASSISTANT_CACHE", str(env))
    assert main(args) == 0
    assert len(IssueIndex(index_path(env, "octo/repo"))) == ISSUES
    assert not (tmp_path / ".cache").exists()
    capsys.readouterr()
