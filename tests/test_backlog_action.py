"""The Action's `backlog` command on the fake GitHub: inputs, the job summary, the outputs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from issue_assistant import action
from issue_assistant.comment import extract_plan
from tests.fakegithub import FakeGitHub
from tests.fakegithub.fixtures import TOKEN, make_tracker
from tests.test_action import BOT, REPO, environment, outputs, seed
from tests.test_backlog import decision


@pytest.fixture
def gh():
    with FakeGitHub(REPO, token=TOKEN) as server:
        seed(server)  # #1, #2 and #3 open; #3 has the payload's labels (bug)
        yield server


def dispatch(gh: FakeGitHub, tmp_path: Path, **inputs: str) -> int:
    path = tmp_path / "dispatch.json"
    path.write_text(json.dumps({"inputs": inputs, "ref": "refs/heads/main"}))
    env = environment(tmp_path, "backlog", "workflow_dispatch", path, **inputs)
    return action.main(env, tracker=make_tracker(gh))


def own(gh: FakeGitHub) -> list[int]:
    return sorted(
        c.issue for c in gh.comments.values() if c.user == BOT and extract_plan(c.body) is not None
    )


def test_dry_run_puts_every_proposal_in_the_summary(gh, tmp_path, fake_engine):
    fake_engine.enqueue(*[decision] * 5)
    assert dispatch(gh, tmp_path, writes="dry-run") == 0
    assert gh.writes == []
    summary = (tmp_path / "summary.md").read_text()
    assert "## issue-assistant backlog: Codertocat/Hello-World" in summary
    assert "nothing was written" in summary
    assert summary.count("<!-- issue-assistant:plan") == 2  # #1 and #2 lack a type; #3 has bug
    out = outputs(tmp_path)
    data = json.loads(out["decision"])
    assert data["proposed"] == [1, 2] and out["skipped"] == "false"


def test_limit_input_bounds_a_live_run(gh, tmp_path, fake_engine):
    fake_engine.enqueue(*[decision] * 5)
    assert dispatch(gh, tmp_path, limit="1") == 0
    assert own(gh) == [1]
    assert (
        "--limit 1 reached; the next run goes on from #2" in (tmp_path / "summary.md").read_text()
    )
    assert outputs(tmp_path)["comment-url"].endswith(f"/issues/1#issuecomment-{max(gh.comments)}")
    assert dispatch(gh, tmp_path, limit="1") == 0
    assert own(gh) == [1, 2]


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ({"limit": "ten"}, "the limit input must be a whole number"),
        ({"limit": "0"}, "the limit input must be a whole number"),
        ({"order": "random"}, "the order input must be oldest or newest"),
        ({"duplicates": "yes"}, "the duplicates input must be true or false"),
        ({"post": "true"}, "the post input goes with duplicates: true"),
    ],
)
def test_bad_inputs_are_one_error_and_no_write(gh, tmp_path, fake_engine, capsys, inputs, message):
    assert dispatch(gh, tmp_path, **inputs) != 0
    assert message in capsys.readouterr().err
    assert gh.writes == []


def test_duplicates_report_in_the_summary(gh, tmp_path, fake_engine):
    assert dispatch(gh, tmp_path, duplicates="true", writes="dry-run") == 0
    summary = (tmp_path / "summary.md").read_text()
    assert "## issue-assistant backlog --duplicates: Codertocat/Hello-World" in summary
    assert "Nothing was closed" in summary
    assert gh.writes == []
