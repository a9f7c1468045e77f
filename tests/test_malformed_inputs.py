"""Malformed inputs (issue 8 item 9): one line saying what and where, exit 2, nothing written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from issue_assistant import action, cli
from tests.fakegithub.fixtures import make_tracker
from tests.test_action import environment, gh, load  # noqa: F401 (fixture)
from tests.test_approve import DATA


def _issue_event(change) -> Any:
    data = load("issues/opened.payload.json")
    data["issue"]["number"] = 3
    return change(data)


def _comment_event(change) -> Any:
    data = load("issue_comment/created.payload.json")
    data["issue"]["number"] = 3
    data["comment"]["body"] = "/assistant approve"
    return change(data)


def _set(path: str, value: Any):
    def change(data: dict) -> dict:
        keys = path.split(".")
        target = data
        for k in keys[:-1]:
            target = target[k]
        if value is _DELETE:
            del target[keys[-1]]
        else:
            target[keys[-1]] = value
        return data

    return change


_DELETE = object()

# (command, event name, payload): each is wrong in one place.
EVENTS = {
    "payload is a string": ("analyze", "issues", lambda: "hello"),
    "payload is a list": ("analyze", "issues", lambda: [1, 2]),
    "payload is null": ("apply", "issue_comment", lambda: None),
    "issue is a string": ("analyze", "issues", lambda: _issue_event(_set("issue", "3"))),
    "issue is a list": ("analyze", "issues", lambda: _issue_event(_set("issue", [3]))),
    "number is a string": ("analyze", "issues", lambda: _issue_event(_set("issue.number", "x"))),
    "number is negative": ("analyze", "issues", lambda: _issue_event(_set("issue.number", -3))),
    "number is a float": ("analyze", "issues", lambda: _issue_event(_set("issue.number", 3.5))),
    "number is a bool": ("analyze", "issues", lambda: _issue_event(_set("issue.number", True))),
    "number is huge": ("analyze", "issues", lambda: _issue_event(_set("issue.number", 10**20))),
    "number is missing": ("analyze", "issues", lambda: _issue_event(_set("issue.number", _DELETE))),
    "user is a string": ("analyze", "issues", lambda: _issue_event(_set("issue.user", "octocat"))),
    "labels is a string": ("analyze", "issues", lambda: _issue_event(_set("issue.labels", "bug"))),
    "a label is a string": ("analyze", "issues", lambda: _issue_event(_set("issue.labels", ["x"]))),
    "created_at is not a time": (
        "analyze",
        "issues",
        lambda: _issue_event(_set("issue.created_at", "yesterday")),
    ),
    "comment without an issue number": (
        "apply",
        "issue_comment",
        lambda: _comment_event(_set("issue.number", _DELETE)),
    ),
    "comment without an issue": (
        "apply",
        "issue_comment",
        lambda: _comment_event(_set("issue", _DELETE)),
    ),
    "comment is a string": (
        "apply",
        "issue_comment",
        lambda: _comment_event(_set("comment", "/assistant approve")),
    ),
    "comment body is a number": (
        "apply",
        "issue_comment",
        lambda: _comment_event(_set("comment.body", 42)),
    ),
    "comment user is a list": (
        "apply",
        "issue_comment",
        lambda: _comment_event(_set("comment.user", [])),
    ),
    "comment issue number is a string": (
        "apply",
        "issue_comment",
        lambda: _comment_event(_set("issue.number", "3")),
    ),
    "schedule payload is a list": ("apply", "schedule", lambda: []),
}


def _record(record_property, stderr: str, writes: int, kind: str, where: str) -> None:
    data = {
        "category": "input",
        "cases": 1,
        "wrong_writes": writes,
        "doubled_writes": 0,
        "tracebacks": int("Traceback" in stderr),
        "kind": kind,
        "where": where,
    }
    record_property("reliability", json.dumps(data))


def _one_error_line(stderr: str) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, lines
    assert "Traceback" not in stderr
    return lines[0]


@pytest.mark.parametrize("case", list(EVENTS))
def test_malformed_webhook_payload(case, gh, tmp_path, capsys, record_property):  # noqa: F811
    command, event_name, payload = EVENTS[case]
    path = tmp_path / "event.json"
    path.write_text(json.dumps(payload()), encoding="utf-8")
    env = environment(tmp_path, command, event_name, path)
    gh.clear_requests()
    status = action.main(env, tracker=make_tracker(gh))
    stderr = capsys.readouterr().err
    _record(record_property, stderr, len(gh.writes), case, f"{command} ({event_name} payload)")
    line = _one_error_line(stderr)
    assert status == 2
    assert str(path) in line and "::error::" in line
    assert gh.writes == []
    assert not (tmp_path / "output").exists() and not (tmp_path / "summary.md").exists()


def test_a_payload_that_is_not_utf8(gh, tmp_path, capsys, record_property):  # noqa: F811
    path = tmp_path / "event.json"
    path.write_bytes(b'{"issue": {"number": 3, "title": "\xff\xfe"}}')
    env = environment(tmp_path, "analyze", "issues", path)
    status = action.main(env, tracker=make_tracker(gh))
    stderr = capsys.readouterr().err
    _record(
        record_property, stderr, len(gh.writes), "payload not UTF-8", "analyze (issues payload)"
    )
    assert status == 2 and str(path) in _one_error_line(stderr) and gh.writes == []


# ---- the command line ------------------------------------------------------------------------


def _snapshot(path: Path) -> Path:
    repo = {"kind": "repository", "full_name": "octo/repo", "fetched_at": "2025-01-02T00:00:00Z"}
    issue = {
        "kind": "issue",
        "number": 1,
        "title": "Crash",
        "user": {"login": "alice"},
        "created_at": "2025-01-01T00:00:00Z",
    }
    path.write_text(json.dumps(repo) + "\n" + json.dumps(issue) + "\n", encoding="utf-8")
    return path


def _not_utf8(path: Path) -> Path:
    _snapshot(path)
    path.write_bytes(path.read_bytes() + b'{"kind": "issue", "title": "caf\xe9"}\n')
    return path


CLI = {
    "minutes nan": (["--minutes", "nan"], _snapshot),
    "minutes inf": (["--minutes", "inf"], _snapshot),
    "minutes 1e12": (["--minutes", "1e12"], _snapshot),
    "minutes huge negative": (["--minutes=-1e300"], _snapshot),
    "minutes negative": (["--minutes=-5"], _snapshot),
    "context-dir is a file": (["--context-dir", "{file}"], _snapshot),
    "context-dir under a file": (["--context-dir", "{file}/sub"], _snapshot),
    "snapshot is not UTF-8": ([], _not_utf8),
}


@pytest.mark.parametrize("case", list(CLI))
def test_malformed_command_line(case, tmp_path, capsys, record_property):
    extra, make = CLI[case]
    snapshot = make(tmp_path / "snap.jsonl")
    a_file = tmp_path / "a-file.txt"
    a_file.write_text("not a directory")
    extra = [x.replace("{file}", str(a_file)) for x in extra]
    cache = tmp_path / "cache"
    argv = ["analyze", "--snapshot", str(snapshot), "--issue", "1", "--cache-dir", str(cache)]
    argv += ["--labels", str(DATA / "labels.toml"), "--config", str(DATA / "config.toml"), *extra]
    before = sorted(p.name for p in tmp_path.iterdir())
    status = cli.main(argv)
    captured = capsys.readouterr()
    written = len(set(tmp_path.iterdir())) - len(before)
    _record(record_property, captured.err, written, case, "the analyze command line")
    line = _one_error_line(captured.err)
    assert status == 2 and line.startswith("issue-assistant: error:")
    assert captured.out == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing written
    assert a_file.read_text() == "not a directory"
    if "snapshot" in case:
        assert str(snapshot) in line
    elif "context-dir" in case:
        assert "--context-dir" in line
    else:
        assert "--minutes" in line
