"""The CLI's one error policy, `--version`, completion, and `--json`."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from issue_assistant import __version__
from issue_assistant.cli import COMMANDS, main
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
    gh = GitHubError("GET", "/repos/a/b", 403, "Forbidden")
    assert gh.exit_code == 1 and gh.line().endswith("403 Forbidden; nothing more was written")
    engine = EngineError("timed out")
    assert (
        engine.exit_code == 1 and engine.line() == "engine failed: timed out; nothing was written"
    )
    # One annotation line whatever the message holds.
    assert annotation(UserError("a\nb 100%")) == "::error::error: a%0Ab 100%25"


def test_config_check_json(tmp_path, capsys):
    labels = tmp_path / "labels.toml"
    labels.write_text('[[type]]\nname = "bug"\n[[area]]\nname = "docs"\n')
    assert main(["config", "check", "--labels", str(labels), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] and out["labels"]["type"] == 1 and out["labels"]["area"] == 1
