"""The read-only sandbox holds (issue 16): a command-line engine cannot read the Action's
secrets from /proc, a grandchild that leaves the session dies with the run and cannot hold the
answer back, and inside a run `issue-assistant` answers only `search`, as of the issue.

Each case records what it measured for `docs/reliability.md` (`python -m tests.reliability`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from issue_assistant.cli import COMMANDS, main
from issue_assistant.engines.command import run_command
from issue_assistant.engines.failures import EngineFailure
from tests.fakegithub import FakeGitHub
from tests.fakegithub.fixtures import TOKEN
from tests.test_races_faults import record

ROOT = Path(__file__).resolve().parents[1]
SECRET = "ghs_SECRET_VALUE_4c2f9e"
linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and prctl")


def script(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / name
    path.write_text(f"#!{sys.executable}\n" + textwrap.dedent(body))
    path.chmod(0o755)
    return path


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


# ---- secrets under /proc -----------------------------------------------------------------

SCAN = """
import json, os, sys
secret = open(sys.argv[1]).read()  # not on a command line, which /proc shows to everyone
seen, readable = [], 0
for pid in os.listdir("/proc"):
    if not pid.isdigit():
        continue
    paths = [f"/proc/{pid}/{n}" for n in ("environ", "cmdline", "mem", "auxv")]
    try:
        paths += [f"/proc/{pid}/task/{t}/environ" for t in os.listdir(f"/proc/{pid}/task")]
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        fds = []
    for path in paths:
        try:
            with open(path, "rb") as fh:
                data = fh.read(1 << 20)
        except OSError:
            continue
        readable += 1
        if secret.encode() in data:
            seen.append(path)
caps = [ln for ln in open("/proc/self/status") if ln.startswith("CapEff")][0].split()[1]
print(json.dumps({"seen": seen, "readable": readable, "caps": caps, "ppid": os.getppid(),
                  "own": secret in json.dumps(dict(os.environ))}))
"""

RUNNER = """
import json, sys
from pathlib import Path
from issue_assistant.engines.command import run_command
done = run_command([sys.argv[1], sys.argv[2]], cwd=Path(sys.argv[3]), env={"PATH": "/usr/bin:/bin"},
                   stdin=None, timeout=20, cap=1_000_000)
print(done.stdout)
"""


@linux
def test_a_cli_engine_cannot_read_the_actions_secrets_from_proc(tmp_path, record_property):
    """The Action's process holds GITHUB_TOKEN in its environment from its start (as on a
    runner): the engine's process scans every /proc/PID/{environ,cmdline,mem,auxv} and task
    environ it can open for it, as root here (with CAP_SYS_PTRACE) if the tests run as root."""
    scan = script(tmp_path, "scan", SCAN)
    (tmp_path / "secret").write_text(SECRET)
    env = {
        "PATH": os.environ["PATH"],
        "PYTHONPATH": str(ROOT),
        "GITHUB_TOKEN": SECRET,
        "INPUT_GITHUB-TOKEN": SECRET,
        "ANTHROPIC_API_KEY": SECRET,
    }
    out = subprocess.run(
        [sys.executable, "-c", RUNNER, str(scan), str(tmp_path / "secret"), str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    found = json.loads(out.stdout.strip().splitlines()[-1])
    leaks = len(found["seen"]) + int(found["own"])
    what = {"kind": "secret under /proc", "where": "CLI engine", "leaks": leaks}
    record(record_property, "sandbox", 0, 0, 0, **what)
    assert found["readable"] > 0  # the scan did read /proc (its own files at least)
    assert leaks == 0, found["seen"]
    assert int(found["caps"], 16) == 0  # no capability at all, even as root


# ---- processes that outlive the run ------------------------------------------------------

ESCAPE = """
import os, subprocess, sys
child = subprocess.Popen([sys.executable, "-c",
    "import os, time; os.setsid(); open(os.environ['PIDFILE'], 'w').write(str(os.getpid())); "
    "time.sleep(600)"])
while not os.path.exists(os.environ["PIDFILE"]):
    pass
print('{"answer": true}', flush=True)
if len(sys.argv) > 1:
    import time
    time.sleep(600)
"""


@linux
@pytest.mark.parametrize("hang", [False, True], ids=["the CLI exits", "the CLI hangs"])
def test_a_grandchild_that_calls_setsid_dies_with_the_run(tmp_path, record_property, hang):
    """The grandchild leaves the session and holds stdout: the answer still arrives (the CLI
    exited) or the run gives up at its time limit (the CLI hangs), and the grandchild is gone."""
    cli = script(tmp_path, "cli", ESCAPE)
    pidfile = tmp_path / "grandchild.pid"
    env = {"PATH": os.environ["PATH"], "PIDFILE": str(pidfile)}
    argv = [str(cli), "hang"] if hang else [str(cli)]
    start = time.monotonic()
    failure = None
    try:
        done = run_command(argv, cwd=tmp_path, env=env, stdin=None, timeout=3, cap=100_000)
    except EngineFailure as exc:
        failure, done = exc, None
    took = time.monotonic() - start
    grandchild = int(pidfile.read_text())
    for _ in range(50):
        if not alive(grandchild):
            break
        time.sleep(0.1)
    survived = alive(grandchild)
    if survived:
        os.kill(grandchild, 9)
    where = f"CLI engine ({'hangs' if hang else 'exits'})"
    what = {"kind": "setsid grandchild holds stdout", "where": where}
    record(record_property, "sandbox", int(survived), 0, 0, **what)
    assert not survived
    if hang:
        assert failure is not None and failure.kind == "transient" and took < 8
    else:
        assert done is not None and '{"answer": true}' in done.stdout and took < 3


def test_reading_stops_at_the_deadline(tmp_path):
    """Whatever holds the pipes, the run returns a little after its time limit."""
    cli = script(tmp_path, "cli", "import time\nprint('partial', flush=True)\ntime.sleep(600)\n")
    start = time.monotonic()
    with pytest.raises(EngineFailure, match="ran past 1 s"):
        run_command(
            [str(cli)],
            cwd=tmp_path,
            env={"PATH": os.environ["PATH"]},
            stdin=None,
            timeout=1,
            cap=100_000,
        )
    assert time.monotonic() - start < 6


# ---- the issue-assistant command inside a run --------------------------------------------

ARGS = {
    "init": ["init", "octo/repo", "--dir", "{tmp}"],
    "analyze": ["analyze", "octo/repo#1"],
    "apply": ["apply", "octo/repo", "--apply"],
    "evaluate": ["evaluate", "--snapshot", "{tmp}/s.jsonl"],
    "calibrate": ["calibrate", "--snapshot", "{tmp}/s.jsonl"],
    "snapshot": ["snapshot", "octo/repo", "-o", "{tmp}/out.jsonl"],
    "index": ["index", "--snapshot", "{tmp}/s.jsonl", "--cache-dir", "{tmp}/cache"],
    "config": ["config", "check"],
    "mcp": ["mcp", "--snapshot", "{tmp}/s.jsonl"],
}


@pytest.mark.parametrize("command", [c for c in COMMANDS if c != "search"])
def test_inside_a_run_every_subcommand_but_search_is_refused(
    command, tmp_path, monkeypatch, capsys, record_property
):
    """Copilot's shell rule can only allow `issue-assistant` as a whole: `apply --apply` (a
    write) and every other subcommand stop before reading anything; nothing reaches GitHub."""
    with FakeGitHub("octo/repo", token=TOKEN) as gh:
        gh.add_issue("An issue")
        monkeypatch.setenv("ISSUE_ASSISTANT_SEARCH_SOCKET", str(tmp_path / "s"))
        monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
        monkeypatch.setenv("GITHUB_API_URL", gh.base_url)
        monkeypatch.chdir(tmp_path)
        argv = [a.replace("{tmp}", str(tmp_path)) for a in ARGS.get(command, [command])]
        try:
            status = main(argv)
        except SystemExit as exc:  # argparse: the arguments did not parse
            status = exc.code
        err = capsys.readouterr().err
        requests = len(gh.requests)
    written = sorted(p.name for p in tmp_path.iterdir())
    record(
        record_property,
        "sandbox",
        requests + len(written),
        0,
        int("Traceback" in err),
        kind="a subcommand inside a run",
        where=f"issue-assistant {command}",
    )
    assert status == 2 and f"not `{command}`" in err, err
    assert requests == 0 and written == []


@pytest.mark.parametrize(
    "extra",
    [["--snapshot", "{tmp}/later.jsonl"], ["--cache-dir", "{tmp}/elsewhere"], ["--config", "x"]],
    ids=["--snapshot", "--cache-dir", "--config"],
)
def test_inside_a_run_search_answers_only_through_the_socket(
    extra, tmp_path, monkeypatch, capsys, record_property
):
    monkeypatch.setenv("ISSUE_ASSISTANT_SEARCH_SOCKET", str(tmp_path / "s"))
    (tmp_path / "later.jsonl").write_text("")
    argv = ["search", "later issue", *[a.replace("{tmp}", str(tmp_path)) for a in extra]]
    status = main(argv)
    err = capsys.readouterr().err
    written = [p.name for p in tmp_path.iterdir() if p.name != "later.jsonl"]
    record(
        record_property,
        "sandbox",
        len(written),
        0,
        int("Traceback" in err),
        kind="search bypassing the as-of socket",
        where=f"search {extra[0]}",
    )
    assert status == 2 and extra[0] in err and "cannot be used" in err
    assert written == []


# ---- grep and read_file: bounded, regular files only -------------------------------------

GREP = """
import json, resource, sys, time
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))  # a runaway compile fails here
from types import SimpleNamespace
from issue_assistant.tools import Checkout, Toolbox

PROPERTY = "reliability"  # what each case records for tests/reliability.py
# a moment that knows nothing beside the checkout: only the file tools are offered
nothing = SimpleNamespace(discussions=None, code=None, list_releases=lambda limit=10: None)
box = Toolbox(nothing, checkout=Checkout(sys.argv[1]))
out = []
for pattern in json.loads(sys.argv[2]):
    start = time.monotonic()
    result = box.call("grep", {"pattern": pattern})
    out.append({"pattern": pattern, "error": result.is_error, "text": result.text,
                "seconds": time.monotonic() - start})
print(json.dumps(out))
"""


def files_only():  # noqa: ANN201
    """A moment that knows nothing beside the checkout: only the file tools are offered."""
    from types import SimpleNamespace

    return SimpleNamespace(discussions=None, code=None, list_releases=lambda limit=10: None)


HEAVY = [
    "a{1000000000}",
    "(a{1000}){1000}",
    "(?:x{100}){100}{100}",
    "(a{1000,1001}){1000,1001}",
    "a{99999999999999999999}",
    "(x+x+)+y",
    "(?:(?:a|aa)+)+b",
]


def test_grep_bounds_the_compile_and_the_match(tmp_path, record_property):
    """Each heavy pattern is answered (an error the model can read) within the grep's time
    limit; the tools never hang the MCP server or the anthropic engine's loop."""
    from issue_assistant.tools.files import GREP_SECONDS

    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.txt").write_text(("a" * 60 + "\n") * 200 + "x" * 40 + "\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", GREP, str(root), json.dumps(HEAVY)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    results = json.loads(out.stdout)
    for r in results:
        slow = int(r["seconds"] > GREP_SECONDS + 1)
        what = {"kind": f"grep {r['pattern']}", "where": "read-only tools"}
        record(record_property, "sandbox", 0, 0, slow + int("Traceback" in r["text"]), **what)
    assert all(r["seconds"] < GREP_SECONDS + 1 for r in results), results
    assert all(r["error"] for r in results[:5]), results  # refused before compiling
    assert "repeats too much" in results[0]["text"]


def test_ordinary_counted_patterns_still_work(tmp_path):

    from issue_assistant.tools import Checkout, Toolbox

    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.py").write_text("x = 'abcabc'\nversion = '1.2.3'\n")
    box = Toolbox(files_only(), checkout=Checkout(root))
    for pattern in [r"(abc){2}", r"\d+\.\d+\.\d+", r"[{]?x", r"\p{L}{3}"]:
        result = box.call("grep", {"pattern": pattern})
        assert not result.is_error and "a.py:" in result.text, (pattern, result.text)


@linux
@pytest.mark.parametrize("tool", ["read_file", "grep", "list_files"])
def test_a_fifo_in_the_checkout_never_blocks(tmp_path, record_property, tool):
    import threading

    from issue_assistant.tools import Checkout, Toolbox

    root = tmp_path / "repo"
    root.mkdir()
    (root / "notes.txt").write_text("hello\n")
    os.mkfifo(root / "pipe")
    box = Toolbox(files_only(), checkout=Checkout(root))
    args = {"read_file": {"path": "pipe"}, "grep": {"pattern": "hello"}, "list_files": {}}[tool]
    results = []
    worker = threading.Thread(target=lambda: results.append(box.call(tool, args)), daemon=True)
    worker.start()
    worker.join(10)
    blocked = worker.is_alive()
    if blocked:  # let the stuck open() return, so the thread ends
        fd = os.open(root / "pipe", os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
    record(
        record_property,
        "sandbox",
        0,
        0,
        int(blocked),
        kind="a FIFO in the checkout",
        where=f"read-only tools: {tool}",
    )
    assert not blocked
    [result] = results
    if tool == "read_file":
        assert result.is_error and "not a regular file" in result.text
    elif tool == "grep":
        assert "notes.txt:1" in result.text
