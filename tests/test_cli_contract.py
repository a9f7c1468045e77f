"""Issue 26: one error contract and no silent dry run, through the real CLI and the real PyGithub
client against the fake GitHub. A user error (an unknown repository or issue, no token, flags
that contradict) is exit 2 in the same sentence on every command; a spent rate limit says when
it resets and what to do; `--apply` that a setting holds back says so on stderr, naming it."""

from __future__ import annotations

from pathlib import Path

import pytest

from issue_assistant.cli import main
from issue_assistant.commands.args import APPLY_OFFLINE, BOTH_SOURCES
from issue_assistant.errors import (
    NO_REPOSITORY,
    NO_SOURCE,
    NO_TOKEN,
    no_such_issue,
    no_such_repository,
)
from issue_assistant.tracker import fetch
from issue_assistant.tracker.client import Throttle
from tests.fakegithub import FakeGitHub
from tests.fakegithub.fixtures import TOKEN
from tests.test_errors_actionable import LABELS
from tests.test_fetch_snapshot import small_repo

SNAPSHOT = str(Path(__file__).resolve().parents[2] / "shared" / "data" / "poetry-sample.jsonl.gz")


@pytest.fixture
def gh(monkeypatch, tmp_path):
    with FakeGitHub("octo/repo", token=TOKEN) as server:
        small_repo(server)
        monkeypatch.setenv("GITHUB_API_URL", server.base_url)
        monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
        monkeypatch.setenv("ISSUE_ASSISTANT_CACHE", str(tmp_path / "cache"))
        for name in ("GH_TOKEN", "GH_REPO", "GITHUB_REPOSITORY", "ISSUE_ASSISTANT_WRITES"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setattr(fetch, "FETCH_THROTTLE", Throttle(0, 0))
        monkeypatch.chdir(tmp_path)
        yield server


def errors(capsys) -> list[str]:
    return [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]


def live(command: str, repo: str) -> list[str]:
    """The command on `repo`, reading GitHub; every file it writes under the current folder."""
    labels = ["--labels", str(LABELS)]
    return {
        "analyze": ["analyze", "-R", repo, "--issue", "3", *labels],
        "apply": ["apply", "-R", repo, *labels],
        "backlog": ["backlog", "-R", repo, *labels],
        "evaluate": ["evaluate", "-R", repo, "-L", "5", *labels],
        "calibrate": ["calibrate", "-R", repo, *labels],
        "snapshot": ["snapshot", "-R", repo, "-o", "s.jsonl"],
        "init": ["init", "-R", repo, "--dir", "drafts"],
    }[command]


COMMANDS = ["analyze", "apply", "backlog", "evaluate", "calibrate", "snapshot", "init"]


@pytest.mark.parametrize("command", COMMANDS)
def test_an_unknown_repository_is_exit_2_in_one_sentence(gh, command, capsys):
    assert main(live(command, "octo/nope")) == 2
    assert errors(capsys) == [f"issue-assistant: error: {no_such_repository('octo/nope')}"]


@pytest.mark.parametrize("argv", [["analyze", "--issue", "99999"], ["apply", "--issue", "99999"]])
def test_an_unknown_issue_is_exit_2_in_one_sentence(gh, argv, capsys):
    assert main([argv[0], "-R", "octo/repo", *argv[1:], "--labels", str(LABELS)]) == 2
    assert errors(capsys) == [f"issue-assistant: error: {no_such_issue('octo/repo', 99999)}"]


@pytest.mark.parametrize("command", COMMANDS)
def test_no_token_is_exit_2_in_one_sentence(gh, command, monkeypatch, capsys):
    monkeypatch.delenv("GITHUB_TOKEN")
    assert main(live(command, "octo/repo")) == 2
    assert errors(capsys) == [f"issue-assistant: error: {NO_TOKEN}"]
    assert gh.requests == []


@pytest.mark.parametrize(
    "argv",
    [
        ["analyze", "--issue", "3"],
        ["evaluate"],
        ["calibrate"],
        ["init"],
        ["mcp"],
        ["backlog", "--duplicates"],
    ],
)
def test_snapshot_and_repository_together_are_refused(gh, argv, capsys):
    assert main([*argv, "--snapshot", SNAPSHOT, "-R", "octo/repo"]) == 2
    assert errors(capsys) == [f"issue-assistant: error: {BOTH_SOURCES}"]
    assert gh.requests == []


@pytest.mark.parametrize(
    ("argv", "sentence"),
    [
        (
            ["analyze", "--issue", "3"],
            "give -R OWNER/REPO --issue N (live), or --snapshot FILE --issue N",
        ),
        (["apply"], NO_REPOSITORY),
        (["backlog"], NO_REPOSITORY),
        (["snapshot", "-o", "s.jsonl"], NO_REPOSITORY),
        (["evaluate"], NO_SOURCE),
        (["calibrate"], NO_SOURCE),
        (["init"], NO_SOURCE),
        (["mcp"], NO_SOURCE),
    ],
)
def test_no_repository_is_exit_2_in_one_sentence(gh, argv, sentence, capsys):
    assert (
        main([*argv, "--labels", str(LABELS)] if argv[0] not in ("snapshot", "init") else argv) == 2
    )
    assert errors(capsys) == [f"issue-assistant: error: {sentence}"]


def test_a_spent_rate_limit_says_when_it_resets_and_what_to_do(gh, capsys):
    gh.fail_primary_rate_limit("GET", r"/repos/octo/repo/issues$", reset_in=1800)
    assert main(live("evaluate", "octo/repo")) == 1
    [line] = errors(capsys)
    assert "API rate limit exceeded" in line
    assert "GitHub's hourly limit resets at " in line and " UTC: run the same command again" in line
    assert "a personal token: 5,000 requests an hour" in line


@pytest.mark.parametrize("argv", [["analyze", "--issue", "3"], ["apply"], ["backlog"]])
@pytest.mark.parametrize(
    ("config", "variable", "setting"),
    [
        ('[approval]\nwrites = "dry-run"\n', None, '[approval] writes = "dry-run" in config.toml'),
        ("", "off", "ISSUE_ASSISTANT_WRITES=off"),
    ],
)
def test_apply_held_back_by_a_setting_says_so(
    gh, argv, config, variable, setting, fake_engine, tmp_path, monkeypatch, capsys
):
    (tmp_path / "config.toml").write_text(config, encoding="utf-8")
    if variable:
        monkeypatch.setenv("ISSUE_ASSISTANT_WRITES", variable)
    gh.add_issue("Please support TOML", "It would help.", "erin")
    fake_engine.enqueue(*[{"type": "feature", "summary": "Asks for TOML."}] * 10)
    code = main([argv[0], "-R", "octo/repo", *argv[1:], "--labels", str(LABELS), "--apply"])
    held = [ln for ln in errors(capsys) if "--apply" in ln]
    assert code == 0 and gh.writes == []
    assert held == [
        f"issue-assistant: warning: --apply: nothing will be written, {setting} "
        f"({variable or 'dry-run'}); remove it or make it live to write"
    ]


def test_without_apply_or_when_live_there_is_no_such_line(gh, fake_engine, tmp_path, capsys):
    (tmp_path / "config.toml").write_text('[approval]\nwrites = "dry-run"\n', encoding="utf-8")
    assert main(["apply", "-R", "octo/repo", "--labels", str(LABELS)]) == 0
    assert not [ln for ln in errors(capsys) if "--apply" in ln]
    (tmp_path / "config.toml").write_text("", encoding="utf-8")
    assert main(["apply", "-R", "octo/repo", "--labels", str(LABELS), "--apply"]) == 0
    assert not [ln for ln in errors(capsys) if "--apply" in ln]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["analyze", "--snapshot", SNAPSHOT, "--issue", "3", "--apply"], APPLY_OFFLINE),
        (["backlog", "--duplicates", "--snapshot", SNAPSHOT, "--apply"], APPLY_OFFLINE),
        (
            ["backlog", "--duplicates", "-R", "octo/repo", "--apply"],
            "--apply with --duplicates writes nothing without --post",
        ),
    ],
)
def test_apply_where_nothing_can_be_written_is_a_user_error(gh, argv, message, capsys):
    assert main([*argv, "--labels", str(LABELS)]) == 2
    assert errors(capsys) == [f"issue-assistant: error: {message}"]


# ---- conventions a `gh` user expects ------------------------------------------------------


def test_bare_command_prints_the_help_and_succeeds(capsys):
    from issue_assistant.cli import COMMANDS

    assert main([]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: issue-assistant") and all(f"    {c} " in out for c in COMMANDS)


def test_a_group_command_lists_its_subcommands(capsys):
    assert main(["config"]) == 0
    out = capsys.readouterr().out
    assert "subcommands:" in out and "    check " in out


def test_config_check_v_names_the_files_it_read(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".github").mkdir()
    (tmp_path / ".github" / "labels.toml").write_text(LABELS.read_text(), encoding="utf-8")
    assert main(["config", "check", "-v"]) == 0
    err = capsys.readouterr().err
    assert f"labels.toml: read {tmp_path / '.github' / 'labels.toml'}" in err
    assert "config.toml: none found (looked in .github/issue-assistant/config.toml, " in err
    assert main(["config", "check"]) == 0
    assert "labels.toml: read" not in capsys.readouterr().err  # quiet without -v


@pytest.mark.parametrize(
    "argv", [["evaluate"], ["backlog"], ["init"], ["search", "q"], ["calibrate"]]
)
def test_dash_l_is_limit(argv):
    from issue_assistant.cli import build_parser

    assert build_parser().parse_args([*argv, "-L", "7"]).limit == 7


def test_the_test_engines_are_hidden_from_lists_and_errors_but_usable(tmp_path, capsys):
    from issue_assistant.engine_registry import engine_class
    from issue_assistant.engines import available

    assert "fake" not in available() and "fake-llm" not in available() and "similar" in available()
    assert engine_class("fake").name == "fake"
    config = tmp_path / "config.toml"
    config.write_text('[engine]\nname = "nosuch"\n', encoding="utf-8")
    assert main(["config", "check", "--labels", str(LABELS), "--config", str(config)]) == 2
    [line] = errors(capsys)
    assert "unknown engine 'nosuch' (available: " in line and "fake" not in line
    config.write_text('[engine]\nname = "fake"\n', encoding="utf-8")
    assert main(["config", "check", "--labels", str(LABELS), "--config", str(config)]) == 0


# ---- files ----------------------------------------------------------------------------------


def test_the_default_outputs_in_a_checkout_are_ignored_by_git():
    """evaluate and backlog write to the current folder by default: in this project's checkout
    (where the README's commands run) git ignores them, with the names a second run takes."""
    import shutil
    import subprocess
    from pathlib import Path

    from issue_assistant.evaluate.report import default_report_path

    root = Path(__file__).resolve().parents[1]
    if shutil.which("git") is None or not (root / ".git").exists():
        pytest.skip("not a git checkout")
    report = default_report_path(root, "huggingface/datasets")
    names = [report, report.with_name(report.stem + "-2.md")]
    names += [report.with_suffix(s) for s in (".jsonl", ".jsonl.bak", ".github.jsonl.gz")]
    names += [root / f"python-poetry-poetry-{k}.md" for k in ("backlog", "duplicates")]
    names += [root / "python-poetry-poetry-backlog-accuracy.md", root / "x-backlog-2.md"]
    for path in names:
        done = subprocess.run(["git", "check-ignore", "-q", "--no-index", str(path)], cwd=root)
        assert done.returncode == 0, f"{path.name} is not ignored by git"
    kept = subprocess.run(["git", "check-ignore", "-q", "--no-index", "docs/evaluate.md"], cwd=root)
    assert kept.returncode == 1


@pytest.fixture(scope="module")
def poetry_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("poetry-cache")


def test_a_report_is_never_overwritten_silently(tmp_path, monkeypatch, capsys, poetry_cache):
    """The default name moves to the next free one, said on stderr; a --report that exists is
    an error; --force overwrites (evaluate's own run: tests/test_evaluate_run.py)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ISSUE_ASSISTANT_CACHE", str(poetry_cache))
    labels = Path(__file__).parent / "data" / "evaluate" / "poetry.labels.toml"
    argv = ["backlog", "--duplicates", "--snapshot", SNAPSHOT, "--labels", str(labels)]
    first = tmp_path / "python-poetry-poetry-duplicates.md"
    assert main(argv) == 0
    assert capsys.readouterr().out.strip() == str(first)
    first.write_text("kept", encoding="utf-8")
    assert main(argv) == 0
    second = tmp_path / "python-poetry-poetry-duplicates-2.md"
    out, err = capsys.readouterr()
    assert out.strip() == str(second) and second.is_file()
    assert f"{first} exists: writing {second} (--force overwrites)" in err
    assert first.read_text(encoding="utf-8") == "kept"
    assert main([*argv, "--report", str(first)]) == 2
    assert "the report exists: --force overwrites it" in capsys.readouterr().err
    assert main([*argv, "--report", str(first), "--force"]) == 0
    assert first.read_text(encoding="utf-8") != "kept"


def test_the_next_free_name_counts_the_files_beside_the_report(tmp_path, capsys):
    from issue_assistant.commands.common import unused_report
    from issue_assistant.commands.evaluate import BESIDE

    report = tmp_path / "o-r-accuracy.md"
    assert unused_report(report, chosen=False, force=False, beside=BESIDE) == report
    (tmp_path / "o-r-accuracy.jsonl").write_text("")  # a run's results without its report
    (tmp_path / "o-r-accuracy-2.github.jsonl.gz").write_text("")
    third = tmp_path / "o-r-accuracy-3.md"
    assert unused_report(report, chosen=False, force=False, beside=BESIDE) == third
    assert unused_report(report, chosen=False, force=True, beside=BESIDE) == report
