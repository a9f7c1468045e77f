"""The claude, gemini and copilot engines against fake executables on PATH (tests/fakecli/).

The fakes print the CLIs' documented output shapes, exit with their documented codes, hang,
flood or print garbage; each test asserts the exact argv (read-only tools only), the scrubbed
environment, and how each failure class is recovered from or given up on.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from issue_assistant.config.sections import Config
from issue_assistant.engines.command import BASE_ENV
from issue_assistant.errors import UserError
from issue_assistant.pipeline import engines_for, replay
from issue_assistant.tracker.asof import AsOfView
from tests.answers import ASKING

SECRETS = {
    "GITHUB_TOKEN": "ghs-secret",
    "GH_TOKEN": "gho-secret",
    "INPUT_GITHUB_TOKEN": "input-secret",
    "COPILOT_ALLOW_ALL": "true",
    "OPENAI_API_KEY": "sk-openai",
}
OWN_KEYS = {
    "claude": "ANTHROPIC_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "copilot": "COPILOT_GITHUB_TOKEN",
}
OURS = {"HOME", "XDG_CONFIG_HOME", "TMPDIR", "ISSUE_ASSISTANT_SEARCH_SOCKET"}


class FakeCLI:
    def __init__(self, bin_dir: Path) -> None:
        self.bin = bin_dir

    def steps(self, *steps: dict) -> None:
        (self.bin / "steps.json").write_text(json.dumps(list(steps)))

    def calls(self) -> list[dict]:
        path = self.bin / "calls.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.fixture
def cli(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    source = (Path(__file__).parent / "fakecli" / "program.py").read_text()
    for name in OWN_KEYS:
        exe = bin_dir / name
        exe.write_text(f"#!{sys.executable}\n{source}")
        exe.chmod(0o755)
    shim = bin_dir / "issue-assistant"
    shim.write_text(
        f"#!{sys.executable}\nimport sys\nfrom issue_assistant.cli import main\nsys.exit(main())\n"
    )
    shim.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin")
    for key, value in {**SECRETS, **{k: f"{k}-value" for k in OWN_KEYS.values()}}.items():
        monkeypatch.setenv(key, value)
    return FakeCLI(bin_dir)


def config(**engine) -> Config:
    return Config.model_validate({"engine": {"timeout_seconds": 30, "max_turns": 6, **engine}})


def run(name, hf_snapshot, hf_index, hf_labels, cfg: Config | None = None, number: int = 7016):
    return replay(
        hf_snapshot,
        number,
        index=hf_index,
        labels=hf_labels,
        config=cfg or config(),
        engine_name=name,
    )


def claude_result(
    answer: dict | str, subtype: str = "success", cost: float = 0.0123, **extra
) -> dict:
    return {
        "stdout": json.dumps(
            {
                "type": "result",
                "subtype": subtype,
                "is_error": subtype != "success",
                "duration_ms": 5300,
                "num_turns": 3,
                "result": answer if isinstance(answer, str) else json.dumps(answer),
                "session_id": "sess-1",
                "total_cost_usd": cost,
                "usage": {
                    "input_tokens": 1200,
                    "cache_creation_input_tokens": 100,
                    "cache_read_input_tokens": 800,
                    "output_tokens": 150,
                },
            }
        ),
        "code": 0 if subtype == "success" else 1,
        **extra,
    }


def gemini_result(answer: dict, **extra) -> dict:
    stats = {
        "models": {
            "gemini-2.5-flash": {
                "api": {"totalRequests": 2, "totalErrors": 0, "totalLatencyMs": 900},
                "tokens": {
                    "input": 800,
                    "prompt": 1000,
                    "candidates": 100,
                    "total": 1100,
                    "cached": 200,
                    "thoughts": 0,
                    "tool": 0,
                },
            }
        },
        "tools": {"totalCalls": 1},
    }
    out = {"session_id": "5625996e", "response": json.dumps(answer), "stats": stats}
    return {"stdout": json.dumps(out, indent=2), **extra}


def gemini_fatal(code: int, kind: str, message: str, exit_code: int | None = None) -> dict:
    """A fatal error as Gemini CLI 0.61.0 prints it with `-o json`: on stderr, after warnings,
    as `[ERROR] ` and the JSON; stdout empty; the exit code is the error's (mod 256)."""
    error = {"session_id": "6fb4b4ae", "error": {"type": kind, "message": message, "code": code}}
    stderr = (
        "Warning: tools.exclude in settings.json is deprecated and will be removed in 1.0.\n"
        f"[ERROR] {json.dumps(error, indent=2)}\n"
    )
    return {"stdout": "", "stderr": stderr, "code": (exit_code or code) % 256}


def copilot_events(*lines: dict, code: int = 0, **extra) -> dict:
    """JSON Lines as Copilot CLI 1.0.102 prints them (ephemeral notices first, `result` last)."""
    notice = {"infoType": "configuration", "message": "Disabled tools: create, edit, task"}
    head = [{"type": "session.info", "data": notice, "ephemeral": True, "id": "i1"}]
    tail = [
        {
            "type": "result",
            "timestamp": "2026-12-01T12:37:58.298Z",
            "sessionId": "78e13e58",
            "exitCode": code,
            "usage": {"premiumRequests": 1, "totalApiDurationMs": 78, "sessionDurationMs": 1582},
        }
    ]
    text = "\n".join(json.dumps(x) for x in head + list(lines) + tail) + "\n"
    return {"stdout": text, "code": code, **extra}


def copilot_result(answer: dict, **extra) -> dict:
    call = {
        "toolCallId": "t1",
        "name": "bash",
        "arguments": {"command": "issue-assistant search x"},
    }
    return copilot_events(
        {"type": "assistant.message", "data": {"content": "", "toolRequests": [call]}},
        {"type": "tool.execution_start", "data": {"toolCallId": "t1", "toolName": "bash"}},
        {"type": "tool.execution_complete", "data": {"success": True, "toolCallId": "t1"}},
        {"type": "assistant.message", "data": {"content": json.dumps(answer), "toolRequests": []}},
        **extra,
    )


RESULTS = {"claude": claude_result, "gemini": gemini_result, "copilot": copilot_result}


def test_claude_exact_argv_prompt_on_stdin_and_usage(cli, hf_snapshot, hf_index, hf_labels):
    cli.steps(claude_result(ASKING, search="drop duplicates"))
    result = run("claude", hf_snapshot, hf_index, hf_labels)
    d = result.decision
    assert (d.engine, d.strategy, d.type, d.areas) == ("claude", "agent", "bug", ["streaming"])
    assert result.error is None
    (call,) = cli.calls()
    assert call["argv"] == [
        "-p",
        "--output-format",
        "json",
        "--max-turns",
        "6",
        "--max-budget-usd",
        "0.5",
        "--tools",
        "Read,Grep,Glob,Bash",
        "--allowedTools",
        "Read,Grep,Glob,Bash(issue-assistant search:*)",
        "--disallowedTools",
        "Write,Edit,MultiEdit,NotebookEdit,WebFetch,WebSearch,Task,Agent",
        "--strict-mcp-config",
        "--permission-mode",
        "dontAsk",
    ]
    assert "issue-assistant search" in call["stdin"] and "instructions.md" in call["stdin"]
    assert {"issue.md", "labels.md", "instructions.md", "similar.md"} <= set(call["files"])
    u = d.usage
    assert (u.tokens_in, u.tokens_out, u.cache_read_tokens, u.cache_write_tokens) == (
        1200,
        150,
        800,
        100,
    )
    assert u.cost_usd == pytest.approx(0.0123) and u.cost_known and u.turns == 3


def test_the_search_is_the_point_in_time_index(cli, hf_snapshot, hf_index, hf_labels):
    """The CLI's `issue-assistant search` reaches the engine's own as-of search, nothing live."""
    view = AsOfView.for_issue(hf_snapshot, 7016)
    found = view.target()  # only earlier issues may come back
    cli.steps(claude_result(ASKING, search="dataset streaming"))
    run("claude", hf_snapshot, hf_index, hf_labels)
    listing = cli.calls()[0]["search"]
    numbers = [int(line.split()[0][1:]) for line in listing.splitlines() if line.startswith("#")]
    assert len(numbers) >= 3 and all(n < found.number for n in numbers)


def test_a_duplicate_found_by_search_is_allowed(cli, hf_snapshot, hf_index, hf_labels):
    cli.steps(claude_result({**ASKING, "duplicate": None}, search="dataset streaming"))
    run("claude", hf_snapshot, hf_index, hf_labels)
    listing = cli.calls()[0]["search"]
    number = int(listing.split()[0][1:])
    (cli.bin / "count").unlink()
    dup = {"number": number, "reason": "same bug", "confidence": 0.8}
    cli.steps(claude_result({**ASKING, "duplicate": dup}, search="dataset streaming"))
    d = run("claude", hf_snapshot, hf_index, hf_labels).decision
    assert d.engine == "claude" and d.duplicate is not None and d.duplicate.number == number


@pytest.mark.parametrize("name", ["claude", "gemini", "copilot"])
def test_environment_is_scrubbed(name, cli, hf_snapshot, hf_index, hf_labels):
    cli.steps(RESULTS[name](ASKING))
    result = run(name, hf_snapshot, hf_index, hf_labels)
    assert result.decision.engine == name
    env = cli.calls()[0]["env"]
    assert set(env) - set(BASE_ENV) == OURS | {OWN_KEYS[name]}
    assert env[OWN_KEYS[name]] == f"{OWN_KEYS[name]}-value"
    assert not any(v in env.values() for v in SECRETS.values())
    assert env["HOME"] != os.environ.get("HOME") and Path(env["HOME"]).name == "home"
    assert not Path(env["HOME"]).exists()  # the temporary HOME is gone afterwards


def test_gemini_argv_settings_and_trusted_workspace(cli, hf_snapshot, hf_index, hf_labels):
    cli.steps(gemini_result(ASKING))
    d = run("gemini", hf_snapshot, hf_index, hf_labels, config(model="gemini-2.5-flash")).decision
    call = cli.calls()[0]
    prompt = call["argv"][1]
    assert call["argv"] == ["-p", prompt, "-o", "json", "-m", "gemini-2.5-flash"]
    settings = json.loads(call["home"][".gemini/settings.json"])
    assert settings["tools"]["core"] == [
        "read_file",
        "glob",
        "grep_search",
        "list_directory",
        "run_shell_command(issue-assistant search)",
    ]
    assert "allowed" not in settings["tools"]  # deprecated, and `core` already allows them
    assert {"write_file", "replace", "web_fetch", "google_web_search"} <= set(
        settings["tools"]["exclude"]
    )
    assert settings["mcpServers"] == {} and settings["model"]["maxSessionTurns"] == 6
    trusted = json.loads(call["home"][".gemini/trustedFolders.json"])
    assert trusted == {call["cwd"]: "TRUST_FOLDER"}
    u = d.usage
    assert (u.tokens_in, u.tokens_out, u.cache_read_tokens, u.turns) == (800, 100, 200, 2)
    assert u.cost_known and u.cost_usd > 0


def test_copilot_argv_is_read_only(cli, hf_snapshot, hf_index, hf_labels):
    cli.steps(copilot_result(ASKING))
    d = run("copilot", hf_snapshot, hf_index, hf_labels).decision
    argv = cli.calls()[0]["argv"]
    assert argv == [
        "-p",
        argv[1],
        "-s",
        "--no-ask-user",
        "--no-auto-update",
        "--output-format",
        "json",
        "--available-tools",
        "view,grep,glob,bash",
        "--deny-tool",
        "write",
        "--disable-builtin-mcps",
        "--allow-tool",
        "shell(issue-assistant)",
    ]
    assert not any(a in argv for a in ("--allow-all", "--yolo", "--allow-all-tools"))
    assert d.type == "bug" and d.usage.tool_calls == 1 and not d.usage.cost_known


# Failure classes -------------------------------------------------------------------------


def test_hang_is_killed_with_its_process_group(cli, hf_snapshot, hf_index, hf_labels):
    # The fallback's label model is fit once per index and moment: fit it before the clock runs.
    run("similar", hf_snapshot, hf_index, hf_labels)
    cli.steps({"sleep": 600, "child": True})
    start = time.monotonic()
    result = run("claude", hf_snapshot, hf_index, hf_labels, config(timeout_seconds=3))
    assert time.monotonic() - start < 15
    assert result.decision.engine == "similar" and result.decision.fallback_from == "claude"
    assert result.decision.usage.failure == "transient"
    child = int((cli.bin / "child.pid").read_text())
    for _ in range(50):
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail("the CLI's child process outlived the timeout")


def test_a_flood_of_output_is_cut_and_given_up(cli, hf_snapshot, hf_index, hf_labels):
    cli.steps({"flood": 100})  # 100 MB
    result = run("gemini", hf_snapshot, hf_index, hf_labels)
    assert result.decision.usage.failure == "unknown" and result.decision.engine == "similar"
    assert "printed more than" in result.error
    assert len(cli.calls()) == 1  # unknown: no retry


def test_garbage_is_reasked_once_then_given_up(cli, hf_snapshot, hf_index, hf_labels):
    garbage = claude_result("I think it is a bug, probably.")
    cli.steps(garbage, garbage)
    result = run("claude", hf_snapshot, hf_index, hf_labels)
    first, second = cli.calls()
    assert "Your previous answer was invalid" in second["stdin"]
    assert second["argv"][-2:] == ["--resume", "sess-1"]
    assert result.decision.usage.failure == "schema" and result.decision.engine == "similar"
    assert "the `claude` engine failed" in result.comment
    assert result.plan.issue == 7016 and not result.plan.duplicate  # nothing of the garbage


def test_unknown_label_is_reasked_and_corrected(cli, hf_snapshot, hf_index, hf_labels):
    cli.steps(copilot_result({**ASKING, "type": "nonsense"}), copilot_result(ASKING))
    d = run("copilot", hf_snapshot, hf_index, hf_labels).decision
    assert "'nonsense' not among" in cli.calls()[1]["argv"][1]
    assert d.engine == "copilot" and d.type == "bug" and d.usage.reasks == 1


def test_claude_turn_limit_resumes_for_a_final_answer(cli, hf_snapshot, hf_index, hf_labels):
    cli.steps(claude_result("", subtype="error_max_turns"), claude_result(ASKING))
    d = run("claude", hf_snapshot, hf_index, hf_labels).decision
    first, second = cli.calls()
    assert second["argv"][second["argv"].index("--max-turns") + 1] == "2"
    assert second["argv"][-2:] == ["--resume", "sess-1"] and "out of turns" in second["stdin"]
    assert d.engine == "claude" and d.usage.forced_submit and d.type == "bug"


def test_gemini_exit_53_is_the_turn_limit(cli, hf_snapshot, hf_index, hf_labels):
    limit = gemini_fatal(53, "FatalTurnLimitedError", "Reached max session turns")
    cli.steps(limit, gemini_result(ASKING))
    d = run("gemini", hf_snapshot, hf_index, hf_labels).decision
    assert d.engine == "gemini" and d.usage.forced_submit and len(cli.calls()) == 2


def test_gemini_rate_limit_is_retried(cli, hf_snapshot, hf_index, hf_labels, monkeypatch):
    monkeypatch.setattr("issue_assistant.engines.failures.backoff", lambda attempt, base=1.0: 0.01)
    busy = gemini_fatal(429, "ApiError", "Resource exhausted")  # exits 429 % 256 = 173
    cli.steps(busy, busy, gemini_result(ASKING))
    d = run("gemini", hf_snapshot, hf_index, hf_labels).decision
    assert d.engine == "gemini" and d.usage.retries == 2 and len(cli.calls()) == 3


def test_claude_resumed_session_cost_is_not_counted_twice(cli, hf_snapshot, hf_index, hf_labels):
    """Claude Code's `total_cost_usd` is the session's running total: a resumed run's includes
    the first run's (checked on 2.1.328), so only the difference is the re-ask's own cost."""
    cli.steps(claude_result("not JSON at all", cost=0.01), claude_result(ASKING, cost=0.03))
    d = run("claude", hf_snapshot, hf_index, hf_labels).decision
    assert cli.calls()[1]["argv"][-2:] == ["--resume", "sess-1"]
    assert d.engine == "claude" and d.usage.reasks == 1
    assert d.usage.cost_usd == pytest.approx(0.03)


def test_claude_api_error_status_decides_the_class(cli, hf_snapshot, hf_index, hf_labels):
    """`api_error_status` is the structured signal; the text alone would stay unknown."""
    data = {"type": "result", "subtype": "success", "is_error": True, "api_error_status": 401}
    data |= {"result": "Request failed", "session_id": "s", "num_turns": 1, "usage": {}}
    cli.steps({"stdout": json.dumps(data), "code": 1})
    with pytest.raises(UserError, match="the claude engine cannot run"):
        run("claude", hf_snapshot, hf_index, hf_labels)
    assert len(cli.calls()) == 1


def test_copilot_session_error_is_retried(cli, hf_snapshot, hf_index, hf_labels, monkeypatch):
    monkeypatch.setattr("issue_assistant.engines.failures.backoff", lambda attempt, base=1.0: 0.01)
    # The event's shape as 1.0.102 prints it; only `statusCode` says this is transient.
    error = {"errorType": "execution", "message": "Failed to get response", "statusCode": 503}
    busy = copilot_events({"type": "session.error", "data": error}, code=1)
    cli.steps(busy, copilot_result(ASKING))
    d = run("copilot", hf_snapshot, hf_index, hf_labels).decision
    assert d.engine == "copilot" and d.usage.retries == 1 and len(cli.calls()) == 2


def test_inside_an_engine_run_only_the_search_may_run(monkeypatch, capsys, tmp_path):
    """The copilot CLI can only allow `issue-assistant` as a whole, so we refuse the rest."""
    from issue_assistant.cli import main

    monkeypatch.setenv("ISSUE_ASSISTANT_SEARCH_SOCKET", str(tmp_path / "s"))
    assert main(["config", "check"]) == 2
    assert "only `issue-assistant search` may run, not `config`" in capsys.readouterr().err
    # The search itself still runs there: test_the_search_is_the_point_in_time_index.


@pytest.mark.parametrize(
    ("name", "step"),
    [
        ("gemini", gemini_fatal(41, "Error", "you must specify the GEMINI_API_KEY variable")),
        ("gemini", {"stdout": "", "stderr": "untrusted", "code": 55}),
        ("claude", claude_result("Invalid API key · Please run /login", subtype="error")),
    ],
)
def test_setup_failures_stop_without_retry(name, step, cli, hf_snapshot, hf_index, hf_labels):
    cli.steps(step)
    with pytest.raises(UserError, match=f"the {name} engine cannot run"):
        run(name, hf_snapshot, hf_index, hf_labels)
    assert len(cli.calls()) == 1


def test_copilot_without_a_login_is_a_setup_failure(cli, hf_snapshot, hf_index, hf_labels):
    """Copilot CLI 1.0.102 with no token and no login: plain text on stderr, exit 1."""
    stderr = (
        "Error: No authentication information found.\n\n"
        "Copilot can be authenticated with GitHub using an OAuth Token or a Fine-Grained "
        "Personal Access Token.\n\n"
        "To authenticate, you can use any of the following methods:\n"
        "  \u2022 Start 'copilot' and run the '/login' command\n"
        "  \u2022 Set the COPILOT_GITHUB_TOKEN, GH_TOKEN, or GITHUB_TOKEN environment variable\n"
        "  \u2022 Run 'gh auth login' to authenticate with the GitHub CLI\n"
    )
    cli.steps({"stdout": "", "stderr": stderr, "code": 1})
    with pytest.raises(UserError, match="No authentication information found"):
        run("copilot", hf_snapshot, hf_index, hf_labels)
    assert len(cli.calls()) == 1


def test_unclassified_exit_stays_unknown(cli, hf_snapshot, hf_index, hf_labels):
    cli.steps({"stderr": "segmentation fault (core dumped)\n", "code": 139})
    result = run("copilot", hf_snapshot, hf_index, hf_labels)
    assert result.decision.usage.failure == "unknown" and len(cli.calls()) == 1


@pytest.mark.parametrize("name", ["claude", "gemini", "copilot"])
def test_check_ready_names_the_fix(name, cli, monkeypatch, hf_labels, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path / "nohome"))
    for key in ("ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN", *OWN_KEYS.values()):
        monkeypatch.delenv(key, raising=False)
    engine, _ = engines_for(config(), hf_labels, name)
    with pytest.raises(UserError, match="not logged in"):
        engine.check_ready()
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(UserError, match="npm install -g"):
        engine.check_ready()


def test_evaluate_runs_a_command_line_engine(cli, tmp_path, monkeypatch):
    from tests.test_evaluate_engines import evaluate

    root = tmp_path / "checkout"
    (root / ".git").mkdir(parents=True)
    monkeypatch.chdir(root)
    monkeypatch.delenv("CI", raising=False)
    cli.steps(claude_result(ASKING))
    text, results = evaluate(tmp_path / "cache", root, "claude", "--engine", "claude")
    assert {r.decision.engine for r in results.values()} == {"claude"}
    assert len(cli.calls()) == len(results) == 6
    assert "| Strategy | `agent` |" in text and "| Failures by class | none |" in text
    assert "| Dollars per issue (mean / most) | $0.0123 / $0.0123 |" in text


def test_a_cli_engines_files_are_kept_only_when_the_checkout_has_them(
    cli, hf_snapshot, hf_index, hf_labels, tmp_path
):
    checkout = tmp_path / "datasets"
    (checkout / "src" / "datasets").mkdir(parents=True)
    (checkout / "src" / "datasets" / "load.py").write_text("def load_dataset(path):\n    pass\n")
    answer = {**ASKING, "files": ["datasets/load.py", "src/datasets/nowhere.py"]}
    cli.steps(claude_result(answer))
    cfg = Config.model_validate(
        {"engine": {"timeout_seconds": 30, "max_turns": 6}, "code": {"checkout": str(checkout)}}
    )
    result = run("claude", hf_snapshot, hf_index, hf_labels, cfg)
    assert result.decision.files == ["src/datasets/load.py"]
    assert "6. `files` (optional)" in result.context.files()["instructions.md"]
