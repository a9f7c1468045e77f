"""One settings object reads the environment, with one precedence for the CLI and the Action."""

from __future__ import annotations

from pathlib import Path

import pytest

from issue_assistant.commands.common import cli_writes
from issue_assistant.config.sections import ApprovalConfig, Config
from issue_assistant.errors import UserError
from issue_assistant.settings import Settings, current, using


def test_inputs_then_variables_in_order():
    env = {"GH_TOKEN": "gh", "GITHUB_TOKEN": "gt", "INPUT_GITHUB-TOKEN": "in"}
    assert Settings.from_env(env).github_token == "in"
    del env["INPUT_GITHUB-TOKEN"]
    assert Settings.from_env(env).github_token == "gt"
    del env["GITHUB_TOKEN"]
    assert Settings.from_env(env).github_token == "gh"
    # The runner passes inputs that were not given as empty strings: they count as unset.
    assert Settings.from_env({"INPUT_GITHUB_TOKEN": "", "GH_TOKEN": "gh"}).github_token == "gh"


def test_repository_gh_repo_then_github_repository_and_the_argument_first():
    s = Settings.from_env({"GH_REPO": "a/b", "GITHUB_REPOSITORY": "c/d"})
    assert s.require_repository() == "a/b"
    assert s.require_repository("e/f") == "e/f"
    assert Settings.from_env({"GITHUB_REPOSITORY": "c/d"}).require_repository() == "c/d"
    with pytest.raises(UserError, match="expected OWNER/REPO"):
        Settings.from_env({}).require_repository("not a repo")


def test_a_bad_value_names_the_variable():
    with pytest.raises(UserError) as err:
        Settings.from_env({"ISSUE_ASSISTANT_MAX_RETRIES": "many"})
    assert "environment variable ISSUE_ASSISTANT_MAX_RETRIES" in str(err.value)
    assert err.value.exit_code == 2


def test_flags_and_defaults():
    s = Settings.from_env({"GITHUB_ACTIONS": "true", "CI": "1"})
    assert s.actions and s.ci and s.api_url == "https://api.github.com" and s.max_retries == 3
    assert not Settings.from_env({"GITHUB_ACTIONS": "false"}).actions


def test_the_mapping_is_the_only_source(monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", "from-the-process")
    assert Settings.from_env({}).github_token is None
    assert Settings.from_env().github_token == "from-the-process"


def test_using_sets_what_current_returns(monkeypatch):
    monkeypatch.setenv("ISSUE_ASSISTANT_CACHE", "/process")
    mine = Settings.from_env({"ISSUE_ASSISTANT_CACHE": "/mine"})
    with using(mine):
        assert current().cache_dir == "/mine"
    assert current().cache_dir == "/process"


@pytest.mark.parametrize(
    ("apply", "configured", "env", "expected"),
    [
        (False, None, None, "dry-run"),
        (True, None, None, "live"),
        (True, "dry-run", None, "dry-run"),  # [approval] writes lowers --apply
        (True, "off", None, "off"),
        (False, "off", None, "off"),
        (False, "live", None, "dry-run"),  # never raises: without --apply no write
        (True, "live", "dry-run", "dry-run"),  # the variable before the file
    ],
)
def test_cli_writes_respects_approval_writes(apply, configured, env, expected):
    config = Config(approval=ApprovalConfig(writes=configured))
    with using(Settings.from_env({"ISSUE_ASSISTANT_WRITES": env} if env else {})):
        assert cli_writes(apply, config) == expected


def test_no_module_but_settings_reads_the_environment():
    import ast
    from pathlib import Path

    package = Path(__file__).resolve().parents[1] / "issue_assistant"
    readers = []
    for path in sorted(package.rglob("*.py")):
        if path.name == "settings.py" and path.parent == package:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv", "environb"):
                readers.append(f"{path.relative_to(package)}:{node.lineno}")
    assert not readers, f"read the environment through issue_assistant.settings: {readers}"


def test_strategy_choices_are_the_configs():
    from typing import get_args

    from issue_assistant.commands.args import STRATEGIES
    from issue_assistant.config.sections import Strategy

    assert get_args(Strategy) == STRATEGIES


def test_a_child_process_gets_only_the_named_variables_that_are_set():
    env = {"PATH": "/bin", "LANG": "", "GEMINI_API_KEY": " g ", "GITHUB_TOKEN": "secret"}
    s = Settings.from_env(env)
    assert s.variables("PATH", "LANG", "TZ", "GEMINI_API_KEY") == {
        "PATH": "/bin",
        "GEMINI_API_KEY": "g",
    }
    with pytest.raises(KeyError):  # the token is never one a child process may get
        s.variables("GITHUB_TOKEN")


def test_names_are_case_insensitive_and_an_empty_one_falls_through():
    assert Settings.from_env({"github_token": "lower"}).github_token == "lower"
    s = Settings.from_env({"Input_Engine": "", "issue_assistant_engine": "llama"})
    assert s.engine == "llama"
    with pytest.raises(UserError, match="environment variable ISSUE_ASSISTANT_MAX_RETRIES"):
        Settings.from_env({"issue_assistant_max_retries": "99"})  # over the limit of 20


@pytest.mark.parametrize(
    "value", ["api.github.com", "127.0.0.1:8080", "ftp://x", "https://", "http://h:port"]
)
def test_a_github_api_url_without_a_scheme_or_host_is_one_line(value, capsys, monkeypatch):
    """Issue 17: GITHUB_API_URL without a scheme ended in a traceback inside PyGithub."""
    from issue_assistant.cli import main

    monkeypatch.setenv("GITHUB_API_URL", value)
    monkeypatch.setenv("GITHUB_TOKEN", "x")
    assert main(["apply", "-R", "octo/repo"]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("issue-assistant: error: environment variable GITHUB_API_URL: ")
    assert "https://" in line and "Value error" not in line


def test_the_api_url_is_kept_without_its_trailing_slash():
    s = Settings.from_env({"GITHUB_API_URL": "https://ghe.example.com/api/v3/"})
    assert s.api_url == "https://ghe.example.com/api/v3"


def test_caches_go_to_the_flag_the_variable_the_config_runner_temp_then_the_user_folder(
    tmp_path, monkeypatch
):
    """Issue 17 item 6: never `.cache/` in the checkout unless asked."""
    import platformdirs

    monkeypatch.setattr(platformdirs, "user_cache_dir", lambda *a, **k: str(tmp_path / "user"))
    env = {"GITHUB_ACTIONS": "true", "RUNNER_TEMP": "/github/runner_temp"}
    assert Settings.from_env(env).cache_root() == Path("/github/runner_temp/issue-assistant")
    assert Settings.from_env({"RUNNER_TEMP": "/r"}).cache_root() == tmp_path / "user"
    assert Settings.from_env({}).cache_root("conf") == Path("conf")
    env["ISSUE_ASSISTANT_CACHE"] = "var"
    assert Settings.from_env(env).cache_root("conf") == Path("var")
    assert Settings.from_env(env).cache_root("conf", "flag") == Path("flag")


def test_native_threads_get_a_default_only_where_the_user_set_none():
    from issue_assistant.settings import NATIVE_THREADS, pin_native_threads

    env = {"PATH": "/bin"}
    pin_native_threads(env)
    assert env == {"PATH": "/bin", **NATIVE_THREADS}
    mine = {"OPENBLAS_NUM_THREADS": "4"}
    pin_native_threads(mine)
    assert mine == {"OPENBLAS_NUM_THREADS": "4"}


def test_the_cli_pins_native_threads_before_numpy_loads(tmp_path):
    import os
    import subprocess
    import sys

    script = (
        "import os, sys\n"
        "import issue_assistant.settings as s\n"
        "pin = s.pin_native_threads\n"
        "def watched(env=None):\n"
        "    print('numpy before:', 'numpy' in sys.modules)\n"
        "    pin(env)\n"
        "s.pin_native_threads = watched\n"
        "from issue_assistant.cli import main\n"
        "main(['calibrate', '--snapshot', 'missing.jsonl.gz'])\n"
        "print('blas:', os.environ.get('OPENBLAS_NUM_THREADS'))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert "numpy before: False" in done.stdout, done.stdout + done.stderr
    assert "blas: 1" in done.stdout
