"""Issue 17, "CLI and Action conventions": one way to name the repository (-R, as gh), --limit
for a count, apply's dry run said first, quiet on success, -v after the subcommand too."""

from __future__ import annotations

from pathlib import Path

import pytest

from issue_assistant.cli import build_parser, main
from tests.conftest import POETRY
from tests.fakegithub import FakeGitHub
from tests.fakegithub.fixtures import TOKEN

LABELS = Path(__file__).parent / "data" / "action" / "labels.toml"


@pytest.mark.parametrize(
    "argv",
    [
        ["analyze", "--issue", "3"],
        ["apply"],
        ["init"],
        ["snapshot", "-o", "x.jsonl"],
        ["evaluate"],
        ["calibrate"],
        ["mcp"],
    ],
)
def test_every_command_that_takes_a_repository_takes_dash_r(argv):
    for flag in ("-R", "--repo"):
        args = build_parser().parse_args([*argv[:1], flag, "octo/repo", *argv[1:]])
        assert args.repo == "octo/repo"


@pytest.fixture
def gh(monkeypatch):
    with FakeGitHub("octo/repo", token=TOKEN) as server:
        server.add_issue("Crash on start", "boom", "alice")
        monkeypatch.setenv("GITHUB_API_URL", server.base_url)
        monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
        yield server


def test_the_positional_forms_still_work_with_a_deprecation_line(gh, tmp_path, capsys):
    assert main(["apply", "octo/repo", "--labels", str(LABELS)]) == 0
    err = capsys.readouterr().err
    assert "warning: the positional OWNER/REPO (octo/repo) is deprecated: use -R octo/repo" in err
    assert main(["apply", "octo/repo", "-R", "octo/other", "--labels", str(LABELS)]) == 2
    assert "two repositories given" in capsys.readouterr().err


def test_analyze_owner_repo_hash_n_is_deprecated_for_dash_r_and_issue(
    gh, tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("ISSUE_ASSISTANT_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    base = ["--labels", str(LABELS)]
    assert main(["analyze", "-R", "octo/repo", "--issue", "1", *base]) == 0
    new = capsys.readouterr()
    assert "deprecated" not in new.err
    assert main(["analyze", "octo/repo#1", *base]) == 0
    old = capsys.readouterr()
    assert "`analyze octo/repo#1` is deprecated: use `analyze -R octo/repo --issue 1`" in old.err
    assert old.out == new.out


def test_limit_is_the_count_and_issues_its_old_name(tmp_path, capsys):
    snap = str(POETRY)
    assert main(["init", "--snapshot", snap, "--dir", str(tmp_path / "a"), "--limit", "5"]) == 0
    assert "deprecated" not in capsys.readouterr().err
    assert main(["init", "--snapshot", snap, "--dir", str(tmp_path / "b"), "--issues", "5"]) == 0
    assert "--issues 5 is deprecated: use --limit 5" in capsys.readouterr().err
    args = build_parser().parse_args(["evaluate", "--limit", "3"])
    assert args.limit == 3


def test_apply_says_dry_run_in_its_first_line(gh, capsys):
    assert main(["apply", "-R", "octo/repo", "--labels", str(LABELS)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "Dry run: nothing is written (--apply writes)."
    assert out[1] == "No issue waits for approval."


def test_resume_defaults_the_same_for_snapshot_and_evaluate():
    """On: both continue an interrupted run unless told --no-resume (evaluate's default is
    "on when the last run was interrupted", since a finished run must start over)."""
    parser = build_parser()
    snapshot = parser.parse_args(["snapshot", "-o", "x.jsonl"])
    evaluate = parser.parse_args(["evaluate"])
    assert snapshot.resume is True and evaluate.resume is None  # None: on for an interrupted run
    for argv in (["snapshot", "-o", "x.jsonl"], ["evaluate"]):
        assert parser.parse_args([*argv, "--no-resume"]).resume is False


def test_quiet_on_success_and_verbose_after_the_subcommand(tmp_path, capfd):
    argv = ["index", "--snapshot", str(POETRY), "--cache-dir", str(tmp_path / "c")]
    assert main(argv) == 0
    quiet = capfd.readouterr()
    assert quiet.err == ""  # no INFO lines with logger names
    assert "issues and pull requests indexed" in quiet.out
    for n, verbose in enumerate((["index", "-v"], ["-v", "index"])):
        fresh = ["--snapshot", str(POETRY), "--cache-dir", str(tmp_path / f"v{n}")]
        assert main([*verbose, *fresh]) == 0
        assert "INFO issue_assistant." in capfd.readouterr().err


def test_warnings_are_one_plain_line_without_v(tmp_path, capfd, monkeypatch):
    """A warning still shows without -v, as `issue-assistant: warning: ...`."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "config.toml").write_text("[similar]\nneighbors = 3\n")  # the old table name
    (tmp_path / "labels.toml").write_text(LABELS.read_text())
    assert main(["config", "check"]) == 0
    err = capfd.readouterr().err.splitlines()
    # the old table's, then `config check`'s own (undescribed labels, no project description)
    assert all(ln.startswith("issue-assistant: warning: ") for ln in err)
    assert "[similar] is deprecated" in err[0]
    assert "[project] description is empty" in err[-1]
    assert len(err) == 2 + sum("description is empty: the LLM" in ln for ln in err)
