"""Caches and files that heal (issue 16): a tampered or stale file in the index folder is logged
in one line and rebuilt, never trusted and never a traceback; a snapshot time without a timezone
is an error naming its line.

Each case records what it measured for `docs/reliability.md` (`python -m tests.reliability`).
"""

from __future__ import annotations

import gzip
import json
import logging
import shutil
from pathlib import Path

import pytest

from issue_assistant import cli
from issue_assistant.index.boilerplate import FILE as BOILERPLATE
from issue_assistant.index.local import index_path, open_index
from tests.conftest import POETRY
from tests.test_races_faults import record

PROPERTY = "reliability"  # what each case records for tests/reliability.py

QUERY = "poetry install lock file dependency resolution"


def search(index) -> list[int]:
    return [h.number for h in index.search(QUERY, limit=10)]


@pytest.fixture(scope="module")
def expected(poetry_snapshot, tmp_path_factory):
    """What a clean index answers (searches, a similar-issues list, boilerplate)."""
    index = open_index(poetry_snapshot, tmp_path_factory.mktemp("clean"))
    issue = next(iter(poetry_snapshot.all_issues()))
    return {
        "search": search(index),
        "similar": [h.number for h in index.similar_to(issue, limit=5)],
        "count": len(index),
        "boilerplate": sorted(index.boilerplate().common),
    }


def damage(path: Path, how: str) -> None:
    size = path.stat().st_size
    if how == "truncated":
        with open(path, "r+b") as fh:
            fh.truncate(size // 2)
    elif how == "zeroed":
        path.write_bytes(b"\0" * max(size, 1))
    elif how == "emptied":
        path.write_bytes(b"")
    else:
        path.write_text(how)


TANTIVY = [".store", ".term", ".idx", ".fast", ".pos", ".fieldnorm", "meta.json", ".managed.json"]
OURS = ["issue-assistant-hashes.json", "issue-assistant-meta.json"]
CASES = [(n, h) for n in TANTIVY + OURS for h in ("truncated", "zeroed")]
CASES += [("issue-assistant-hashes.json", "[1, 2]"), ("issue-assistant-meta.json", "[]")]
CASES += [("issue-assistant-meta.json", '{"schema_version": 2, "count": "many"}')]


def _answers(snapshot, cache: Path) -> dict:
    index = open_index(snapshot, cache)
    issue = next(iter(snapshot.all_issues()))
    numbers = [h.number for h in index.search(QUERY, limit=50)]
    return {
        "search": search(index),
        "similar": [h.number for h in index.similar_to(issue, limit=5)],
        "count": len(index),
        "doubled": len(numbers) - len(set(numbers)),
    }


@pytest.mark.parametrize(("name", "how"), CASES, ids=[f"{n} {h[:12]}" for n, h in CASES])
def test_a_damaged_index_file_is_rebuilt(
    poetry_snapshot, expected, tmp_path, caplog, record_property, name, how
):
    cache = tmp_path / "cache"
    open_index(poetry_snapshot, cache)
    folder = index_path(cache, poetry_snapshot.repository.full_name)
    targets = [p for p in folder.iterdir() if p.name == name or p.name.endswith(name)]
    assert targets, sorted(p.name for p in folder.iterdir())
    for target in targets:
        damage(target, how)
    caplog.set_level(logging.WARNING)
    tracebacks = 0
    try:
        got = _answers(poetry_snapshot, cache)
        again = _answers(poetry_snapshot, cache)  # the run after: healed, no more warnings
    except Exception:  # noqa: BLE001 - what is measured
        tracebacks, got, again = 1, {}, {}
    wrong = int(got.get("search") != expected["search"]) + got.get("doubled", 0)
    what = {"kind": f"{name} {how[:20]}", "where": "index folder"}
    record(record_property, "cache", wrong, 0, tracebacks, **what)
    assert tracebacks == 0 and wrong == 0, got
    assert got["similar"] == expected["similar"] and got["count"] == expected["count"]
    assert again == got
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert all("\n" not in w for w in warnings)


def test_the_index_folder_replaced_by_a_file_is_rebuilt(
    poetry_snapshot, expected, tmp_path, caplog, record_property
):
    cache = tmp_path / "cache"
    folder = index_path(cache, poetry_snapshot.repository.full_name)
    folder.parent.mkdir(parents=True)
    folder.write_text("not a folder")
    caplog.set_level(logging.WARNING)
    tracebacks = 0
    try:
        got = _answers(poetry_snapshot, cache)
    except Exception:  # noqa: BLE001 - what is measured
        tracebacks, got = 1, {}
    record(
        record_property,
        "cache",
        0,
        0,
        tracebacks,
        kind="the index folder is a file",
        where="index folder",
    )
    assert tracebacks == 0 and got["search"] == expected["search"]
    assert any("is a file" in r.getMessage() for r in caplog.records)


BAD_BOILERPLATE = {
    "a list": "[1, 2]",
    "a string": '"x"',
    "common a list": '{"version": 1, "indexed": 5, "common": []}',
    "a time a number": '{"version": 1, "indexed": 5, "common": {"ab": 5}}',
    "indexed negative": '{"version": 1, "indexed": -5, "common": {}}',
    "indexed a string": '{"version": 1, "indexed": "many", "common": {}}',
    "not JSON": "{",
    "zeroed": "\0" * 64,
    "deep": "[" * 100_000,
}


@pytest.mark.parametrize("name", list(BAD_BOILERPLATE))
def test_a_bad_boilerplate_file_is_rebuilt(
    poetry_snapshot, expected, tmp_path, caplog, record_property, name
):
    cache = tmp_path / "cache"
    index = open_index(poetry_snapshot, cache)
    index.boilerplate()
    (index.path / BOILERPLATE).write_text(BAD_BOILERPLATE[name])
    caplog.set_level(logging.WARNING)
    tracebacks = 0
    try:
        common = sorted(open_index(poetry_snapshot, cache).boilerplate().common)
    except Exception:  # noqa: BLE001 - what is measured
        tracebacks, common = 1, None
    record(
        record_property,
        "cache",
        int(common != expected["boilerplate"]),
        0,
        tracebacks,
        kind=f"boilerplate.json {name}",
        where="index folder",
    )
    assert tracebacks == 0 and common == expected["boilerplate"]
    assert json.loads((index.path / BOILERPLATE).read_text())["version"] == 1  # rewritten


@pytest.mark.parametrize(
    ("line", "field"),
    [(1, "fetched_at"), (2, "created_at"), (3, "closed_at")],
)
def test_a_snapshot_time_without_a_timezone_is_one_line_naming_it(
    tmp_path, capsys, record_property, line, field
):
    with gzip.open(POETRY, "rt", encoding="utf-8") as fh:
        lines = [json.loads(x) for x in fh.read().splitlines()[:5]]
    if field == "closed_at":
        lines[line - 1]["closed_at"] = "2024-02-01T10:00:00"
    else:
        lines[line - 1][field] = "2024-01-01T10:00:00"
    path = tmp_path / "naive.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    status = cli.main(
        ["search", "install", "--snapshot", str(path), "--cache-dir", str(tmp_path / "c")]
    )
    err = capsys.readouterr().err
    record(
        record_property,
        "cache",
        0,
        0,
        int("Traceback" in err),
        kind=f"snapshot {field} without a timezone",
        where="snapshot",
    )
    assert status == 2 and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    assert f"{path}:{line}" in err and field in err and "timezone" in err


def test_a_clean_index_is_reused_as_is(poetry_snapshot, tmp_path, caplog):
    cache = tmp_path / "cache"
    open_index(poetry_snapshot, cache)
    caplog.set_level(logging.WARNING)
    index = open_index(poetry_snapshot, cache)
    assert index.update(poetry_snapshot.all_issues()) == 0
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    shutil.rmtree(cache)
