"""The CLI's one error policy, `--version`, completion, and `--json`."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import pytest

from issue_assistant import __version__
from issue_assistant.cli import COMMANDS, build_parser, main
from issue_assistant.errors import EngineError, GitHubError, UserError, annotation

pytest.importorskip("shtab")


def test_version(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out.strip().endswith(__version__)


def test_completion_names_every_command():
    out = subprocess.run(
        [sys.executable, "-m", "issue_assistant", "--print-completion", "bash"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert all(name in out for name in COMMANDS)


def test_user_error_exit_2_one_line_no_traceback(tmp_path):
    run = subprocess.run(
        [sys.executable, "-m", "issue_assistant", "config", "check", "--labels", "nope.toml"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert run.returncode == 2
    assert run.stderr.startswith("issue-assistant: error: ") and "Traceback" not in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1


def test_exit_codes_and_lines():
    assert UserError("x", where="f:1").exit_code == 2
    gh = GitHubError("GET", "/repos/a/b", 403, "Forbidden", consequence="nothing was written")
    assert gh.exit_code == 1 and gh.line().endswith("403 Forbidden; nothing was written")
    # a read-only command's error says nothing of writes; a hint comes last
    gh = GitHubError("GET", "/repos/a/b", 401, "Bad credentials", hint="Give a valid token")
    assert (
        gh.line() == "error: GitHub GET /repos/a/b failed: 401 Bad credentials. Give a valid token"
    )
    engine = EngineError("timed out")
    assert (
        engine.exit_code == 1 and engine.line() == "engine failed: timed out; nothing was written"
    )
    # One annotation line whatever the message holds.
    assert annotation(UserError("a\nb 100%")) == "::error::a%0Ab 100%25"  # not ::error::error:
    assert annotation(engine) == "::error::engine failed: timed out; nothing was written"


def test_config_check_json(tmp_path, capsys):
    labels = tmp_path / "labels.toml"
    labels.write_text('[[type]]\nname = "bug"\n[[area]]\nname = "docs"\n')
    assert main(["config", "check", "--labels", str(labels), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] and out["labels"]["type"] == 1 and out["labels"]["area"] == 1


#: commands with no result to print as JSON: `mcp` speaks the MCP protocol on stdout
NO_RESULT = {"mcp"}
#: not there yet: `snapshot`'s one summary line (commands/snapshot.py)
NO_JSON_YET = {"snapshot"}


def test_every_command_that_prints_results_takes_json():
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert set(sub.choices) == set(COMMANDS)
    for name in set(COMMANDS) - NO_RESULT - NO_JSON_YET:
        command = sub.choices[name]
        if name == "config":  # a group: its subcommand prints the result
            command = _subcommand(command)
        flags = {flag for action in command._actions for flag in action.option_strings}
        assert "--json" in flags, f"{name} has no --json"


def _subcommand(parser: argparse.ArgumentParser, name: str = "check") -> argparse.ArgumentParser:
    group = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return group.choices[name]


def _labelled_snapshot(tmp_path):
    from issue_assistant.tracker.snapshot import write_snapshot
    from tests.test_learn import snap, synthetic

    issues = synthetic(120)
    path = tmp_path / "s.jsonl"
    write_snapshot(path, snap(issues).repository, issues)
    (tmp_path / "conf").mkdir()
    labels = tmp_path / "conf" / "labels.toml"
    labels.write_text('[[type]]\nname = "bug"\n[[type]]\nname = "enhancement"\n')
    return path, labels


def test_index_json(tmp_path, capsys, monkeypatch):
    path, labels = _labelled_snapshot(tmp_path)
    monkeypatch.chdir(tmp_path)  # no ./labels.toml: no label model
    argv = ["index", "--snapshot", str(path), "--cache-dir", str(tmp_path / "c"), "--json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["repository"] == "o/r" and out["indexed"] == 120 and out["label_model"] is None
    assert (tmp_path / "c").exists() and out["path"].startswith(str(tmp_path / "c"))
    assert main([*argv, "--labels", str(labels)]) == 0
    model = json.loads(capsys.readouterr().out)["label_model"]
    assert model["refit"] is True and model["labelled_issues"] == 120
    assert main([*argv, "--labels", str(labels)]) == 0  # up to date now
    assert json.loads(capsys.readouterr().out)["label_model"]["refit"] is False


def test_calibrate_json_is_what_it_wrote(tmp_path, capsys):
    path, labels = _labelled_snapshot(tmp_path)
    cache = tmp_path / "c"
    argv = [
        "calibrate",
        "--snapshot",
        str(path),
        "--labels",
        str(labels),
        "--cache-dir",
        str(cache),
    ]
    assert main([*argv, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    written = json.loads((cache / "index" / "o__r" / "calibration.json").read_text())
    assert out["path"].endswith("calibration.json") and out["source"] == "snapshot s.jsonl"
    assert {k: out[k] for k in written} == written
    assert out["labels"]["type"]["model"] == "learned"
