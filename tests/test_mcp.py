"""`issue-assistant mcp` through the MCP SDK's own client over stdio (a real subprocess)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from issue_assistant.tools import TOOLS
from issue_assistant.tracker.snapshot import read_snapshot
from tests import contextdata as data
from tests.fakegithub import FakeGitHub
from tests.fakegithub.fixtures import TOKEN

HERE = Path(__file__).resolve().parent
POETRY = HERE.parents[1] / "shared" / "data" / "poetry-sample.jsonl.gz"
LABELS = HERE / "data" / "evaluate" / "poetry.labels.toml"
AS_OF = "2025-02-24T09:00:00Z"
ISSUE_TOOLS = ["search_issues", "get_issue", "list_labels"]
CONTEXT_TOOLS = ["list_releases", "search_discussions"]
FILE_TOOLS = ["read_file", "grep", "list_files"]
# issue 10 §3's read-only tools, and list_files: everything the server may ever offer
READ_ONLY = {*ISSUE_TOOLS, *CONTEXT_TOOLS, "likely_files", *FILE_TOOLS}


def session(args: list[str], cwd: Path, env: dict[str, str] | None = None):
    """Run `script(client)` against a spawned server; returns what the script returns.

    The SDK passes the server only a safe subset of the environment: `PYTHONPATH` is passed on
    so that the server runs this tree's code (a worktree over a shared venv)."""
    if os.environ.get("PYTHONPATH"):
        env = {"PYTHONPATH": os.environ["PYTHONPATH"], **(env or {})}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "issue_assistant", "mcp", *args, "--labels", str(LABELS)],
        cwd=str(cwd),
        env=env,
    )

    def run(script):  # noqa: ANN001, ANN202
        async def main():  # noqa: ANN202
            async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
                await client.initialize()
                return await script(client)

        return anyio.run(main)

    return run


async def text(client: ClientSession, name: str, arguments: dict) -> tuple[bool, str]:
    result = await client.call_tool(name, arguments)
    assert len(result.content) == 1 and result.content[0].type == "text"
    return bool(result.is_error), result.content[0].text


@pytest.fixture
def checkout(tmp_path):
    root = tmp_path / "checkout"
    (root / "src").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / "src" / "solver.py").write_text("def solve(deps):\n    raise SolverProblemError()\n")
    (root / ".git" / "config").write_text("secret\n")
    (tmp_path / "outside.txt").write_text("outside\n")
    return root


def test_snapshot_server_serves_every_read_only_tool(tmp_path, checkout):
    moment = datetime.fromisoformat(AS_OF.replace("Z", "+00:00"))
    snapshot = read_snapshot(POETRY)
    later = next(i.number for i in snapshot.all_issues() if i.created_at > moment)
    earlier = max(
        (i for i in snapshot.all_issues() if i.created_at < moment and not i.is_pull_request),
        key=lambda i: i.created_at,
    )
    args = ["--snapshot", str(POETRY), "--as-of", AS_OF, "--checkout", str(checkout)]
    args += ["--cache-dir", str(tmp_path / "cache")]

    async def script(client: ClientSession) -> None:
        listed = (await client.list_tools()).tools
        # no release list or discussions in this snapshot: those two tools are not offered
        assert [t.name for t in listed] == ["likely_files", *ISSUE_TOOLS, *FILE_TOOLS]
        for t in listed:
            assert t.annotations.read_only_hint and not t.annotations.destructive_hint
            assert t.input_schema["type"] == "object" and t.description

        bad, found = await text(client, "search_issues", {"query": "poetry install lock"})
        numbers = [int(line.split()[0][1:]) for line in found.splitlines()]
        assert not bad and numbers
        assert all(snapshot.get_issue(n).created_at < moment for n in numbers)  # as of T
        bad, issue = await text(client, "get_issue", {"number": earlier.number})
        assert not bad and issue.startswith(f"#{earlier.number} [")
        assert await text(client, "get_issue", {"number": later}) == (
            True,
            f"error: no earlier issue #{later}",
        )
        bad, labels = await text(client, "list_labels", {})
        assert not bad and "- kind/bug" in labels
        bad, lines = await text(client, "read_file", {"path": "src/solver.py", "end": 1})
        assert (bad, lines.splitlines()[1]) == (False, "    1| def solve(deps):")
        assert await text(client, "grep", {"pattern": "Solver\\w+", "glob": "*.py"}) == (
            False,
            "src/solver.py:2: raise SolverProblemError()\n1 match in 1 file.",
        )
        assert await text(client, "list_files", {}) == (False, "src/solver.py")

        # bad input is an error result, and the server goes on serving
        for name, arguments, expected in [
            ("search_issues", {"query": "x", "limit": "many"}, "limit: Input should be"),
            ("search_issues", {"limit": 5}, "query: Field required"),
            ("get_issue", {"number": [1]}, "number: Input should be a valid integer"),
            ("read_file", {"path": "../outside.txt"}, "'..' is not allowed"),
            ("read_file", {"path": ".git/config"}, "ignored"),
            ("grep", {"pattern": "("}, "not a valid regular expression"),
            ("add_labels", {"number": 1, "labels": ["x"]}, "unknown tool 'add_labels'"),
        ]:
            bad, message = await text(client, name, arguments)
            assert bad and expected in message, (name, message)
        assert not (await text(client, "list_labels", {}))[0]

    session(args, tmp_path)(script)


def test_live_server_reads_github_and_writes_nothing(tmp_path):
    with FakeGitHub("python-poetry/poetry", token=TOKEN) as server:
        server.load_snapshot(POETRY)
        snapshot = read_snapshot(POETRY)
        commented = next(i for i in snapshot.all_issues() if i.comments and not i.is_pull_request)
        env = {"GITHUB_TOKEN": TOKEN, "GITHUB_API_URL": server.base_url}
        args = ["--repo", "python-poetry/poetry", "--cache-dir", str(tmp_path / "cache")]

        async def script(client: ClientSession) -> None:
            names = [t.name for t in (await client.list_tools()).tools]
            assert names == CONTEXT_TOOLS + ISSUE_TOOLS  # no checkout, no file tools
            bad, found = await text(client, "search_issues", {"query": "poetry lock"})
            assert not bad and found.startswith("#")
            bad, issue = await text(client, "get_issue", {"number": commented.number})
            assert not bad and f"comments ({min(len(commented.comments), 10)} of" in issue
            bad, _ = await text(client, "get_issue", {"number": 999999})
            assert bad

        session(args, tmp_path, env)(script)
        assert server.writes == []
        assert f"/repos/python-poetry/poetry/issues/{commented.number}/timeline" in server.paths()


def test_every_registered_tool_is_read_only():
    assert set(TOOLS) == READ_ONLY


def test_snapshot_server_with_releases_discussions_and_code(tmp_path):
    """Every read-only tool, on a snapshot that has releases and discussions, as of day 20."""
    snapshot = data.write(tmp_path / "tinyparse.jsonl")
    root = data.checkout(tmp_path / "checkout")
    args = ["--snapshot", str(snapshot), "--as-of", data.day(20).isoformat()]
    args += ["--checkout", str(root), "--cache-dir", str(tmp_path / "cache")]

    async def script(client: ClientSession) -> None:
        listed = (await client.list_tools()).tools
        assert {t.name for t in listed} == READ_ONLY
        assert all(t.annotations.read_only_hint for t in listed)
        bad, releases = await text(client, "list_releases", {})
        assert not bad and "v1.1.0" in releases and "v1.2.0" not in releases  # day 30: later
        bad, found = await text(client, "search_discussions", {"text": "cache directory"})
        assert not bad and found.startswith("discussion #50 [answered, Q&A] How do I configure")
        # #52 was answered on day 40: as of day 20 it shows unanswered, without the answer
        bad, crash = await text(client, "search_discussions", {"text": "parser crash empty"})
        assert not bad and crash.startswith("discussion #52 [unanswered, Q&A]")
        assert "Fixed in 1.2.0" not in crash
        bad, files = await text(
            client, "likely_files", {"text": "IndexError in parse_tokens on empty input"}
        )
        assert not bad and files.splitlines()[0].startswith("src/tinyparse/parser.py")

    session(args, tmp_path)(script)


def test_live_server_serves_releases_and_discussions(tmp_path):
    with FakeGitHub("octo/tinyparse", token=TOKEN) as server:
        server.load_snapshot(data.snapshot())
        for r in data.RELEASES:
            server.add_release(r.tag, r.published_at, name=r.name, body=r.notes)
        for d in data.DISCUSSIONS:
            server.add_discussion(
                d.title, d.body, d.user.login, category=d.category, created_at=d.created_at
            )
        env = {"GITHUB_TOKEN": TOKEN, "GITHUB_API_URL": server.base_url}
        cache = tmp_path / "cache"
        args = ["--repo", "octo/tinyparse", "--cache-dir", str(cache)]
        args += ["--checkout", str(data.checkout(tmp_path / "checkout"))]

        async def script(client: ClientSession) -> None:
            assert {t.name for t in (await client.list_tools()).tools} == READ_ONLY
            bad, releases = await text(client, "list_releases", {"limit": 1})
            assert not bad and "v1.2.0" in releases and "v1.1.0" not in releases
            bad, found = await text(client, "search_discussions", {"text": "plugins roadmap"})
            assert not bad and found.startswith("discussion #2 [unanswered, Ideas] Roadmap")

        session(args, tmp_path, env)(script)
        assert server.writes == []
        assert sum(p.endswith("/releases") for p in server.paths()) == 1
    assert (cache / "index" / "octo__tinyparse" / "discussions.json").is_file()


def test_live_releases_as_of_a_moment_are_read_whole(fake_github, monkeypatch):
    """Now, the newest page is enough; as of an earlier moment every page is read."""
    from issue_assistant.commands.mcp import LiveIssues
    from issue_assistant.tracker import github_tracker
    from issue_assistant.tracker.asof import AsOfView
    from tests.fakegithub.fixtures import make_tracker

    monkeypatch.setattr(github_tracker, "RELEASES_PAGE", 2)
    for k in range(5):
        fake_github.add_release(f"v{k}", data.day(k))
    gh = make_tracker(fake_github, per_page=2)
    assert [r.tag for r in LiveIssues(gh, data.snapshot()).releases() or []] == ["v4", "v3"]
    fake_github.clear_requests()
    then = AsOfView(LiveIssues(gh, data.snapshot(), every_release=True), data.day(1.5))
    assert [r.tag for r in then.releases() or []] == ["v1", "v0"]
    assert len([p for p in fake_github.paths() if p.endswith("/releases")]) == 3


def test_arguments_that_are_not_an_object_get_a_protocol_error(tmp_path):
    """What the SDK's client cannot send: the server answers invalid params and goes on."""
    command = [sys.executable, "-m", "issue_assistant", "mcp", "--snapshot", str(POETRY)]
    command += ["--labels", str(LABELS), "--cache-dir", str(tmp_path / "cache")]
    proc = subprocess.Popen(
        command,
        cwd=tmp_path,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )

    def ask(id: int, method: str, params: dict) -> dict:
        proc.stdin.write(
            json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        )
        proc.stdin.write("\n")
        proc.stdin.flush()
        return json.loads(proc.stdout.readline())

    try:
        hello = {"protocolVersion": "2025-06-18", "capabilities": {}}
        init = ask(1, "initialize", {**hello, "clientInfo": {"name": "raw", "version": "1"}})
        assert init["result"]["serverInfo"]["name"] == "issue-assistant"
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        proc.stdin.write("\n")
        for id, arguments in [(2, "drop duplicates"), (3, ["x", 3]), (4, 7)]:
            answer = ask(id, "tools/call", {"name": "search_issues", "arguments": arguments})
            assert answer["id"] == id and answer["error"]["code"] == -32602
        labels = ask(5, "tools/call", {"name": "list_labels"})
        assert not labels["result"]["isError"]
        assert "kind/bug" in labels["result"]["content"][0]["text"]
    finally:
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
