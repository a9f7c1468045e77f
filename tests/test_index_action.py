"""The Action's `index` command on the fake GitHub: a scheduled run builds the index and fits
the label model, so the run that posts the first comment fits nothing; nothing is written."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from issue_assistant import action, live, sync
from issue_assistant.config.labels import load_labels
from issue_assistant.config.sections import Config, IndexConfig
from issue_assistant.index import IssueIndex
from issue_assistant.index.local import index_path
from issue_assistant.learn.store import model_path
from tests.fakegithub import FakeGitHub
from tests.fakegithub.fixtures import TOKEN, make_tracker
from tests.test_action import environment, outputs

ROOT = Path(__file__).resolve().parents[1]
REPO = "Codertocat/Hello-World"
T0 = datetime(2024, 3, 1, tzinfo=UTC)
NOW = T0 + timedelta(days=30)
ISSUES = 120


@pytest.fixture
def gh():
    with FakeGitHub(REPO, token=TOKEN) as server:
        for i in range(1, ISSUES + 1):
            bug = i % 2 == 1
            server.add_issue(
                f"Crash reading parquet shard {i % 7}" if bug else f"Support writing shard {i % 7}",
                f"Reading shard {i % 7} crashes with a traceback, error {i}."
                if bug
                else f"Please add an option to write shard {i % 7} as parquet ({i}).",
                f"user{i}",
                labels=["bug"] if bug else ["feature"],
                created_at=T0 + timedelta(hours=i),
                updated_at=T0 + timedelta(hours=i, minutes=5),
            )
        yield server


def run_index(gh: FakeGitHub, tmp_path: Path) -> int:
    env = environment(tmp_path, "index", "schedule", None)
    return action.run(env, tracker=make_tracker(gh, per_page=20), now=NOW)


def test_a_scheduled_index_run_fits_ahead_of_the_first_comment(gh, tmp_path):
    path = index_path(tmp_path / "cache", REPO)
    assert run_index(gh, tmp_path) == 0
    assert gh.writes == []
    summary = (tmp_path / "summary.md").read_text()
    assert f"## issue-assistant index: {REPO}" in summary
    assert f"Search index: complete, {ISSUES:,} issues and pull requests" in summary
    assert "s in this run): fit on 120 labelled issues" in summary
    data = json.loads(outputs(tmp_path)["decision"])
    assert data["indexed"] == ISSUES and data["building"] is False and data["refit"] is True
    assert model_path(path).is_file() and len(IssueIndex(path)) == ISSUES

    # Again: nothing due, nothing fit.
    assert run_index(gh, tmp_path) == 0
    summary = (tmp_path / "summary.md").read_text().split("## issue-assistant index")[-1]
    assert "Label model, up to date: fit on 120 labelled issues" in summary
    assert json.loads(outputs(tmp_path)["decision"])["refit"] is False

    # The event's run loads that model: it fits nothing.
    new = gh.add_issue("Crash reading parquet shard 3 again", "It crashes.", "newbie")
    result = live.analyze_live(
        REPO,
        new,
        labels=load_labels(ROOT / "tests" / "data" / "action" / "labels.toml"),
        config=Config(index=IndexConfig(cache_dir=str(tmp_path / "cache"))),
        engine_name="similar",
        writes="dry-run",
        tracker=make_tracker(gh),
        now=NOW + timedelta(hours=1),
    )
    assert result.decision is not None
    assert "the saved label model" in result.decision["calibration"]
    assert "fit now" not in result.decision["calibration"]


def test_a_rate_limited_index_run_says_the_build_goes_on(gh, tmp_path, monkeypatch):
    monkeypatch.setattr(sync, "LIST_CHUNK", 20)
    monkeypatch.setattr(sync, "RATE_MARGIN", 5)
    gh.limit_rate(9)
    assert run_index(gh, tmp_path) == 0
    assert gh.writes == []
    summary = (tmp_path / "summary.md").read_text()
    indexed = len(IssueIndex(index_path(tmp_path / "cache", REPO)))
    assert 0 < indexed < ISSUES
    assert f"still being built: {indexed:,} of about" in summary
    assert json.loads(outputs(tmp_path)["decision"])["building"] is True


def test_an_unknown_command_names_index(gh, tmp_path, capsys):
    env = environment(tmp_path, "reindex", "schedule", None)
    assert action.main(env, tracker=make_tracker(gh)) != 0
    assert "analyze, apply, backlog or index" in capsys.readouterr().err


def test_the_documented_index_workflow_keeps_the_cache_the_comments_read():
    import yaml

    from scripts.lint_workflows import documented

    texts = [
        t for _, t in documented(ROOT) if t.startswith("# .github/workflows/issue-assistant-index")
    ]
    assert len(texts) == 1
    flow = yaml.safe_load(texts[0])
    steps = flow["jobs"]["index"]["steps"]
    (run,) = [s for s in steps if "issue-assistant/issue-assistant" in s.get("uses", "")]
    assert run["with"]["command"] == "index"
    assert flow["jobs"]["index"]["permissions"]["issues"] == "read"  # it writes nothing
    main = yaml.safe_load((ROOT / "docs" / "workflow.yml").read_text(encoding="utf-8"))
    cache = next(s for s in steps if s.get("name") == "Restore the issue index")["with"]
    theirs = next(
        s for s in main["jobs"]["triage"]["steps"] if s.get("name") == "Restore the issue index"
    )["with"]
    assert cache["path"] == theirs["path"] and cache["restore-keys"] == theirs["restore-keys"]
