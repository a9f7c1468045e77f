"""The MCP server when the repository changed or the checkout is huge (issue 27): as of a moment
before a rename, the live server neither shows nor finds an issue by its later title, and a
checkout of `/` still answers `initialize` quickly. Recorded for `docs/reliability.md`.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from datetime import timedelta

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from issue_assistant.commands.mcp import toolbox
from issue_assistant.tracker.snapshot import write_snapshot
from tests.fakegithub import FakeGitHub
from tests.fakegithub.fixtures import TOKEN
from tests.test_asof_titles import NEW, OLD, T0, snapshot
from tests.test_races_faults import record

PROPERTY = "reliability"  # what each case records for tests/reliability.py

MOMENT = T0 + timedelta(days=6)  # after #2 was opened, before #1 was renamed


def namespace(tmp_path, **kw) -> argparse.Namespace:  # noqa: ANN001
    base = {
        "snapshot": None,
        "repo": None,
        "as_of": MOMENT,
        "checkout": None,
        "cache_dir": str(tmp_path / "cache"),
        "labels": None,
        "config": None,
    }
    return argparse.Namespace(**{**base, **kw})


@pytest.fixture
def snap_file(tmp_path):
    snap = snapshot()
    path = tmp_path / "s.jsonl"
    write_snapshot(path, snap.repository, snap.all_issues())
    return path


@pytest.mark.parametrize("source", ["snapshot", "live"])
def test_as_of_a_moment_before_a_rename_mcp_shows_and_finds_the_title_then(
    tmp_path, snap_file, source, monkeypatch, record_property
):
    if source == "live":
        server = FakeGitHub("o/r", token=TOKEN).start()
        server.load_snapshot(snap_file)
        monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
        monkeypatch.setenv("GITHUB_API_URL", server.base_url)
        args = namespace(tmp_path, repo="o/r")
    else:
        server = None
        args = namespace(tmp_path, snapshot=str(snap_file))
    try:
        box = toolbox(args)
        shown = box.call("get_issue", {"number": 1}).text
        later = box.call("search_issues", {"query": "parquet shards crash loading"}).text
        then = box.call("search_issues", {"query": "installer setup question"}).text
    finally:
        if server is not None:
            server.stop()
    found_later = any(line.startswith("#1 ") for line in later.splitlines())
    leaks = int(NEW in shown) + int(found_later) + int(NEW in later + then)
    record(
        record_property, "asof", leaks, 0, 0, kind="a title renamed later", where=f"mcp {source}"
    )
    assert OLD in shown and NEW not in shown
    assert not found_later and NEW not in later + then


def test_mcp_on_the_root_folder_answers_initialize_quickly(tmp_path, snap_file, record_property):
    env = {"PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "issue_assistant", "mcp", "--snapshot", str(snap_file), "--checkout", "/"]
        + ["--cache-dir", str(tmp_path / "cache")],
        cwd=str(tmp_path),
        env=env,
    )
    seen: dict[str, object] = {}

    async def main() -> None:
        start = time.monotonic()
        with anyio.fail_after(60):
            async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
                await client.initialize()
                seen["initialize_s"] = time.monotonic() - start
                seen["tools"] = [t.name for t in (await client.list_tools()).tools]
                result = await client.call_tool("list_files", {"glob": "*.nothing-has-this"})
                seen["listed"] = result.content[0].text  # type: ignore[union-attr]

    timed_out = 0
    try:
        anyio.run(main)
    except TimeoutError:
        timed_out = 1
    record(record_property, "input", 0, 0, timed_out, kind="checkout /", where="mcp startup")
    assert not timed_out and seen["initialize_s"] < 30  # type: ignore[operator]
    assert "likely_files" in seen["tools"] and "list_files" in seen["tools"]  # type: ignore[operator]
    assert "No files match" in str(seen["listed"])
