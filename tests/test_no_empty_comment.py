"""Issue 17 item 1: a templated issue (poetry's forms add `kind/bug`) with nothing to propose gets
no comment; the log and the job summary say why, naming the template, not "not confident".

The fake GitHub holds the poetry sample as it was a minute after the issue was opened (events
and comments rewound), read through the real PyGithub client; the engine is the real `similar`.
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from issue_assistant import action, cli
from issue_assistant.comment import extract_plan
from issue_assistant.decision import Decision
from issue_assistant.tracker.asof import AsOfView
from tests.conftest import POETRY, ROOT
from tests.fakegithub import FakeGitHub
from tests.fakegithub.fixtures import TOKEN, make_tracker
from tests.test_action import outputs

LABELS = ROOT / "tests" / "data" / "evaluate" / "poetry.labels.toml"
REPO = "python-poetry/poetry"
NUMBER = 10218  # opened with `kind/bug` and `status/triage` by the bug form; says its version


@pytest.fixture(scope="module")
def moment(poetry_snapshot):
    return poetry_snapshot.get_issue(NUMBER).created_at + timedelta(minutes=1)


@pytest.fixture
def gh(poetry_snapshot, moment):
    with FakeGitHub(REPO, token=TOKEN) as server:
        view = AsOfView(poetry_snapshot, moment)
        for info in poetry_snapshot.repository.labels:
            server.add_label(info.name, info.color, info.description)
        for issue in view.all_issues():
            server.load_issue(issue)
        yield server


def action_env(tmp_path: Path, config: Path, **extra: str) -> dict[str, str]:
    """The Action's environment for an `issues` event in `tmp_path/event.json`."""
    return {
        "GITHUB_ACTIONS": "true",
        "GITHUB_REPOSITORY": REPO,
        "GITHUB_EVENT_NAME": "issues",
        "GITHUB_EVENT_PATH": str(tmp_path / "event.json"),
        "GITHUB_WORKSPACE": str(tmp_path),
        "GITHUB_OUTPUT": str(tmp_path / "output"),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "INPUT_LABELS": str(LABELS),
        "INPUT_CONFIG": str(config),
        **extra,
    }


def run_action(gh, tmp_path: Path, moment, writes: str = "live") -> int:
    issue = gh.issues[NUMBER]
    payload = {
        "action": "opened",
        "issue": {
            "number": NUMBER,
            "title": issue.title,
            "user": {"login": issue.user, "type": "User"},
            "created_at": issue.created_at.isoformat(),
            "labels": [{"name": n} for n in issue.labels],
        },
    }
    (tmp_path / "event.json").write_text(json.dumps(payload), encoding="utf-8")
    config = tmp_path / "config.toml"
    config.write_text(f'[approval]\nwrites = "{writes}"\n', encoding="utf-8")
    env = action_env(tmp_path, config, RUNNER_TEMP=str(tmp_path / "runner-temp"))
    return action.run(env, tracker=make_tracker(gh), now=moment)


@pytest.mark.parametrize("writes", ["live", "dry-run"])
def test_a_templated_issue_with_nothing_to_propose_gets_no_comment(
    gh, tmp_path, moment, writes, caplog
):
    caplog.set_level("INFO")
    assert gh.issues[NUMBER].labels == ["kind/bug", "status/triage"]
    assert run_action(gh, tmp_path, moment, writes) == 0
    assert gh.writes == []
    assert not [c for c in gh.comments.values() if c.user == "github-actions[bot]"]
    reason = (
        "nothing to propose: `kind/bug` came with the issue (its template); no other label is "
        "clear enough, no duplicate was found and nothing is missing to ask"
    )
    out = outputs(tmp_path)
    assert out["skipped"] == "true" and out["comment-url"] == "" and out["labels"] == ""
    decision = json.loads(out["decision"])
    assert decision["type"] is None and decision["engine"] == "similar"  # the engine did run
    summary = (tmp_path / "summary.md").read_text()
    assert reason in summary and "not confident" not in summary
    assert "would post" not in summary and "Nothing to apply" not in summary
    assert any(reason in r.getMessage() for r in caplog.records)
    # the index went to $RUNNER_TEMP (what the workflow keeps with actions/cache)
    assert (tmp_path / "runner-temp" / "issue-assistant" / "index").is_dir()


def test_a_proposal_beside_a_template_label_names_the_template(gh, tmp_path, moment, fake_engine):
    """With something to propose (a question), the comment is posted; its "Why" says the type
    came with the issue instead of calling the engine unsure, and nothing above it narrates."""
    gh.issues[NUMBER].body = "It crashes."  # no version any more: the bug form's question
    fake_engine.enqueue(Decision(type="kind/bug", questions=["Which Poetry version?"]))
    config = tmp_path / "config.toml"
    config.write_text('[engine]\nname = "fake"\nfallback = ""\n', encoding="utf-8")
    payload = {"issue": {"number": NUMBER, "labels": [{"name": "kind/bug"}]}}
    (tmp_path / "event.json").write_text(json.dumps(payload), encoding="utf-8")
    env = action_env(
        tmp_path, config, INPUT_ENGINE="fake", ISSUE_ASSISTANT_CACHE=str(tmp_path / "cache")
    )
    assert action.run(env, tracker=make_tracker(gh), now=moment) == 0
    [comment] = [c for c in gh.comments.values() if c.user == "github-actions[bot]"]
    visible, why = comment.body.split("<details><summary>Why</summary>")
    assert "- Already labelled: `kind/bug` came with the issue (its template).\n" in why
    assert "kind/bug" not in visible and "**Proposed:**" not in visible
    assert "Which Poetry version?" in visible
    assert "not sure" not in comment.body and "not confident" not in comment.body
    assert extract_plan(comment.body).preset == {"kind/bug": "template"}
    assert outputs(tmp_path)["labels"] == ""


def test_offline_analyze_of_a_templated_issue_prints_no_comment(tmp_path, capsys):
    argv = ["analyze", "--snapshot", str(POETRY), "--issue", str(NUMBER)]
    argv += ["--labels", str(LABELS), "--cache-dir", str(tmp_path / "cache")]
    assert cli.main(argv) == 0
    out, err = capsys.readouterr()
    assert out == ""
    assert f"no comment for #{NUMBER}: nothing to propose" in err
    assert "`kind/bug` came with the issue (its template)" in err
