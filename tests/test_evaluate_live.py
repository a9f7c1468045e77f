"""`evaluate` live, against the local fake GitHub loaded with the poetry sample: reads only."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from issue_assistant.commands import evaluate as command
from issue_assistant.config.labels import load_labels
from issue_assistant.evaluate.gold import gold_for
from issue_assistant.evaluate.results import read_results
from issue_assistant.tracker.asof import ONE_MINUTE
from issue_assistant.tracker.snapshot import read_snapshot
from tests.fakegithub import FakeGitHub
from tests.fakegithub.fixtures import TOKEN, make_tracker

HERE = Path(__file__).resolve().parent
POETRY = Path(__file__).resolve().parents[2] / "shared" / "data" / "poetry-sample.jsonl.gz"
LABELS = HERE / "data" / "evaluate" / "poetry.labels.toml"


@pytest.fixture
def server():
    with FakeGitHub("python-poetry/poetry", token=TOKEN) as gh:
        gh.load_snapshot(POETRY)
        yield gh


def test_live_run_reads_github_and_writes_nothing(server, tmp_path, monkeypatch, fake_engine):
    root = tmp_path / "checkout"
    (root / ".git").mkdir(parents=True)
    monkeypatch.chdir(root)
    monkeypatch.setenv("GH_REPO", "python-poetry/poetry")
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    monkeypatch.setenv("GITHUB_API_URL", server.base_url)
    made = []

    def unthrottled(full_name, token, base_url):  # the real one waits 0.25 s between requests
        assert (full_name, token, base_url) == ("python-poetry/poetry", TOKEN, server.base_url)
        made.append(make_tracker(server))
        return made[-1]

    monkeypatch.setattr("issue_assistant.tracker.github_tracker.GitHubTracker", unthrottled)
    parser = argparse.ArgumentParser()
    command.add_arguments(parser)
    args = parser.parse_args(
        [
            "--labels",
            str(LABELS),
            "--engine",
            "fake",
            "--issues",
            "6",
            "--cache-dir",
            str(tmp_path / "cache"),
        ]
    )
    assert command.run(args) == 0
    assert made and server.writes == []
    report = root / "python-poetry-poetry-accuracy.md"  # in the current folder
    text = report.read_text()
    assert "| Issues evaluated | 6 |" in text and "GitHub, read-only" in text
    header, results, _ = read_results(report.with_suffix(".jsonl"))
    assert header.examined < header.window  # only the newest closed issues were fetched

    # the gold labels are those of the snapshot, whose events the fake server replays
    snapshot = read_snapshot(POETRY)
    labels = load_labels(LABELS)
    for number, r in results.items():
        issue = snapshot.get_issue(number)
        expected = gold_for(snapshot, issue, issue.created_at + ONE_MINUTE, labels, "x[bot]")
        assert r.gold.labels == expected.labels
        assert r.gold.present == expected.present
        assert r.gold.events_known


def test_live_replays_see_releases_and_discussions_as_they_were(server):
    """`evaluate --repo` reads every release and discussion once; each replay sees only those
    of its moment (before: the live snapshot had none, and every context said "not known")."""
    from datetime import timedelta

    from issue_assistant.evaluate.live import read_live
    from issue_assistant.tracker.asof import AsOfView

    snapshot = read_snapshot(POETRY)
    issues = sorted(snapshot.all_issues(), key=lambda i: i.created_at)
    middle = issues[len(issues) // 2].created_at
    server.add_release("v1.0", middle - timedelta(days=30), name="1.0", body="Old notes.")
    server.add_release("v2.0", middle + timedelta(days=30), name="2.0", body="New notes.")
    server.add_discussion(
        "How to pin?",
        "Pinning question",
        "carol",
        category="Q&A",
        created_at=middle - timedelta(days=1),
    )
    listed, _ = read_live(make_tracker(server), load_labels(LABELS), "x[bot]", 2)
    assert [r.tag for r in listed.releases()] == ["v2.0", "v1.0"]
    assert [d.title for d in listed.discussions()] == ["How to pin?"]
    view = AsOfView(listed, middle)
    assert [r.tag for r in view.releases()] == ["v1.0"]
    assert [d.title for d in view.discussions()] == ["How to pin?"]
    assert [r.tag for r in AsOfView(listed, middle - timedelta(days=60)).releases()] == []


def test_an_interrupted_live_run_resumes_without_reading_github_again(
    server, tmp_path, monkeypatch, fake_engine
):
    """Issue 17: `evaluate --resume` re-listed every issue (~45 s on a real repository); it now
    reads what the interrupted run saved beside its results, and makes no request at all."""
    from issue_assistant.decision import Decision

    root = tmp_path / "checkout"
    (root / ".git").mkdir(parents=True)
    monkeypatch.chdir(root)
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    monkeypatch.setenv("GITHUB_API_URL", server.base_url)
    monkeypatch.setattr(
        "issue_assistant.tracker.github_tracker.GitHubTracker", lambda *a, **k: make_tracker(server)
    )

    def interrupt(context):  # noqa: ANN001, ANN202
        raise KeyboardInterrupt

    def run() -> int:
        parser = argparse.ArgumentParser()
        command.add_arguments(parser)
        argv = ["-R", "python-poetry/poetry", "--labels", str(LABELS), "--engine", "fake"]
        argv += ["--limit", "6", "--cache-dir", str(tmp_path / "cache")]
        return command.run(parser.parse_args(argv))

    fake_engine.enqueue(Decision(), Decision(), interrupt)
    assert run() == 130
    report = root / "python-poetry-poetry-accuracy.md"
    saved = root / "python-poetry-poetry-accuracy.github.jsonl.gz"
    assert saved.is_file() and len(read_snapshot(saved)) == len(server.issues)
    server.clear_requests()
    fake_engine.reset()
    fake_engine.enqueue(*[Decision()] * 6)
    assert run() == 0
    assert server.requests == []  # resumed from the saved read
    assert len(fake_engine.history) == 4
    header, results, _ = read_results(report.with_suffix(".jsonl"))
    assert len(results) == 6 and header.source == "GitHub, read-only"
    assert not saved.exists()  # the run is complete: the saved read is gone
