"""Caches shared and tampered with (issue 27): one writer at a time per cache, a second run that
says so in one line (exit 0), clearing that tolerates files vanishing, every stored file checked
on load and healed in one logged line, and snapshot updates that forget the issues they lost.
Recorded for `docs/reliability.md`.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from issue_assistant.backlog.state import BacklogState
from issue_assistant.cachelock import lock_path
from issue_assistant.cli import main
from issue_assistant.index import IssueIndex
from issue_assistant.index import vectors as vmod
from issue_assistant.index.local import index_path
from issue_assistant.tracker.models import Issue, Repository, User
from issue_assistant.tracker.snapshot import write_snapshot
from tests.test_races_faults import record
from tests.test_vectors import DIM, embed, issue, store

PROPERTY = "reliability"  # what each case records for tests/reliability.py

CATEGORY = "cache"
ROOT = Path(__file__).resolve().parents[1]
T0 = datetime(2024, 1, 1, tzinfo=UTC)
TITLES = {
    1: "Crash when loading a parquet file",
    2: "Parquet loader ignores the schema",
    3: "Add a progress bar to map",
}


def snapshot(path: Path, numbers: list[int]) -> Path:
    repo = Repository(full_name="octo/repo", fetched_at=T0 + timedelta(days=30))
    issues = [
        Issue(
            number=n,
            title=TITLES[n],
            body=f"{TITLES[n]}, details {n}.",
            user=User(login="u"),
            created_at=T0 + timedelta(days=n),
        )
        for n in numbers
    ]
    write_snapshot(path, repo, issues)
    return path


def search(snap: Path, cache: Path, capsys, query: str = "parquet") -> list[int]:  # noqa: ANN001
    assert (
        main(["search", query, "--snapshot", str(snap), "--cache-dir", str(cache), "--json"]) == 0
    )
    return [json.loads(line)["number"] for line in capsys.readouterr().out.splitlines()]


# ---- the index forgets what the snapshot lost ------------------------------------------------


@pytest.mark.parametrize("how", ["incremental", "lines unknown"])
def test_a_snapshot_update_without_an_issue_forgets_it(tmp_path, capsys, how, record_property):
    snap, cache = tmp_path / "s.jsonl", tmp_path / "cache"
    snapshot(snap, [1, 2, 3])
    assert sorted(search(snap, cache, capsys)) == [1, 2]
    os.utime(snapshot(snap, [1, 3]), (1, 1))  # issue 2 deleted (or transferred) since
    folder = index_path(cache, "octo/repo")
    if how == "lines unknown":  # an index written before the lines' numbers were kept
        (folder / "issue-assistant-line-numbers.bin").unlink()
    found = search(snap, cache, capsys)
    fresh = search(snap, tmp_path / "fresh", capsys)
    leaked = int(2 in found)
    record(
        record_property, "change", 0, 0, 0, leaks=leaked, kind="deleted", where=f"snapshot {how}"
    )
    assert found == fresh == [1]
    assert IssueIndex(folder).numbers() == {1, 3}


def test_remove_drops_the_documents_and_their_vectors(tmp_path):
    index = IssueIndex(tmp_path / "idx")

    class Embedder:
        def embed_one(self, text: str) -> np.ndarray:
            return embed(text)

    index.vectors = vmod.VectorStore(index.path / "vectors", "test-model", DIM)
    index._embedder = Embedder()  # type: ignore[assignment]
    issues = [issue(n) for n in (1, 2, 3)]
    index.update(issues)
    assert index.embed(issues) == 3
    assert index.remove([2, 99]) == 1
    assert index.numbers() == {1, 3} and index.stored(2) is None
    assert set(index.vectors.row_of) == {1, 3}
    again = vmod.VectorStore(index.path / "vectors", "test-model", DIM)
    assert set(again.row_of) == {1, 3}
    assert IssueIndex(tmp_path / "idx").numbers() == {1, 3}


# ---- one writer at a time ------------------------------------------------------------------


HOLD = textwrap.dedent(
    """
    import sys, time
    from issue_assistant.cachelock import holding
    with holding(sys.argv[1]):
        print("held", flush=True)
        time.sleep(float(sys.argv[2]))
    """
)


def hold(folder: Path, seconds: float) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(folder), str(seconds)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def test_a_second_run_on_a_held_cache_says_so_in_one_line_and_exits_0(
    tmp_path, capsys, monkeypatch, record_property
):
    snap, cache = snapshot(tmp_path / "s.jsonl", [1, 2, 3]), tmp_path / "cache"
    monkeypatch.setenv("ISSUE_ASSISTANT_LOCK_WAIT", "0.5")
    proc = hold(index_path(cache, "octo/repo"), 30)
    try:
        code = main(["index", "--snapshot", str(snap), "--cache-dir", str(cache)])
    finally:
        proc.kill()
        proc.wait()
    err = capsys.readouterr().err.strip()
    record(record_property, CATEGORY, 0, 0, int("Traceback" in err), kind="held", where="index")
    assert code == 0 and len(err.splitlines()) == 1
    assert "another run holds the cache" in err and "nothing was done" in err
    # once the other run is done, the next one goes on
    assert main(["index", "--snapshot", str(snap), "--cache-dir", str(cache)]) == 0


def test_a_second_run_waits_for_the_first_and_then_works(tmp_path, capsys, monkeypatch):
    snap, cache = snapshot(tmp_path / "s.jsonl", [1, 2, 3]), tmp_path / "cache"
    monkeypatch.setenv("ISSUE_ASSISTANT_LOCK_WAIT", "20")
    proc = hold(index_path(cache, "octo/repo"), 1.0)
    try:
        found = search(snap, cache, capsys)
    finally:
        proc.wait()
    assert sorted(found) == [1, 2]


def test_the_lock_file_lives_beside_the_folder_it_guards(tmp_path):
    folder = tmp_path / "cache" / "index" / "octo__repo"
    assert lock_path(folder).parent == folder.parent  # clearing the folder never removes it


def test_two_processes_building_one_empty_cache_both_succeed(tmp_path, record_property):
    snap, cache = snapshot(tmp_path / "s.jsonl", [1, 2, 3]), tmp_path / "cache"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "issue_assistant"]
    cmds = [
        [*argv, "index", "--snapshot", str(snap), "--cache-dir", str(cache)],
        [*argv, "search", "parquet", "--snapshot", str(snap), "--cache-dir", str(cache)],
    ]
    procs = [subprocess.Popen(c, env=env, stderr=subprocess.PIPE, text=True) for c in cmds]
    errs = [p.communicate(timeout=120)[1] for p in procs]
    tracebacks = sum("Traceback" in e for e in errs)
    record(record_property, CATEGORY, 0, 0, tracebacks, kind="two at once", where="index+search")
    assert [p.returncode for p in procs] == [0, 0] and tracebacks == 0


def test_clearing_tolerates_files_that_vanish(tmp_path, monkeypatch):
    index = IssueIndex(tmp_path / "idx")
    index.update([issue(1)])
    real = Path.iterdir

    def vanishing(self):  # noqa: ANN001, ANN202 - another process removes them meanwhile
        yield from real(self)
        yield self / ".tantivy-meta.lock"
        yield self / "gone-folder"

    monkeypatch.setattr(Path, "iterdir", vanishing)
    index._clear()
    monkeypatch.setattr(Path, "iterdir", real)
    assert list(index.path.iterdir()) == []


# ---- stored files checked on load ----------------------------------------------------------


def _info(s) -> dict:  # noqa: ANN001
    return json.loads((s.path / vmod.INFO).read_text())


TAMPER = {
    "rows negative": lambda s: _write_info(s, rows=-5),
    "rows a string": lambda s: _write_info(s, rows="12"),
    "rows a list": lambda s: _write_info(s, rows=[1]),
    "rows NaN": lambda s: (s.path / vmod.INFO).write_text(
        json.dumps({**_info(s), "rows": 0}).replace('"rows": 0', '"rows": NaN')
    ),
    "file a list": lambda s: (s.path / vmod.INFO).write_text("[1, 2]"),
    "vectors a directory": lambda s: _replace_by_dir(s.path / vmod.VECTORS),
    "rows a directory": lambda s: _replace_by_dir(s.path / vmod.ROWS),
    "negative numbers": lambda s: _poke_rows(s, -7),
    "wrong dim": lambda s: _write_info(s, dim=DIM * 2),
}


def _write_info(s, **changes) -> None:  # noqa: ANN001
    (s.path / vmod.INFO).write_text(json.dumps({**_info(s), **changes}))


def _replace_by_dir(path: Path) -> None:
    path.unlink()
    (path / "x").mkdir(parents=True)


def _poke_rows(s, number: int) -> None:  # noqa: ANN001
    rows = np.fromfile(s.path / vmod.ROWS, dtype=vmod.ROW_TYPE)
    rows["number"][0] = number
    rows.tofile(s.path / vmod.ROWS)


@pytest.mark.parametrize("how", sorted(TAMPER))
def test_a_tampered_vector_store_heals_in_one_line(tmp_path, caplog, how, record_property):
    s = store(tmp_path)
    first = [issue(n) for n in range(1, 6)]
    s.update(s.missing(first), embed)
    TAMPER[how](s)
    tracebacks = 0
    with caplog.at_level(logging.WARNING):
        try:
            again = store(tmp_path)
            again.update(again.missing(first), embed)  # rebuilt by the next update
            query = again.vector(3)
            assert query is not None
            hits = again.nearest(query, before=T0 + timedelta(days=9), exclude=None, limit=3)
        except Exception:  # noqa: BLE001 - counted: the point of the test
            tracebacks = 1
            raise
        finally:
            record(record_property, CATEGORY, 0, 0, tracebacks, kind=how, where="vectors")
    assert hits[0][0] == 3 and all(np.isfinite(score) for _, score in hits)
    assert len(again) == 5
    warned = [r for r in caplog.records if "rebuilt" in r.getMessage()]
    assert len(warned) == 1 and "\n" not in warned[0].getMessage()


def test_nan_vectors_are_never_served(tmp_path, caplog, record_property):
    s = store(tmp_path)
    s.update(s.missing([issue(n) for n in range(1, 6)]), embed)
    vecs = np.fromfile(s.path / vmod.VECTORS, dtype=np.float32).reshape(-1, DIM)
    vecs[2] = np.nan
    vecs.tofile(s.path / vmod.VECTORS)
    again = store(tmp_path)
    assert again.vector(3) is None
    with caplog.at_level(logging.WARNING):
        hits = again.nearest(embed("x"), before=T0 + timedelta(days=9), exclude=None, limit=10)
    served = [n for n, score in hits if n == 3 or not np.isfinite(score)]
    record(record_property, CATEGORY, 0, 0, 0, leaks=len(served), kind="NaN rows", where="vectors")
    assert served == [] and len(hits) == 4
    assert 3 in {i.number for i, _ in again.missing([issue(3)])}  # computed again


@pytest.mark.parametrize("kind", ["a directory", "a list", "not JSON"])
def test_backlog_state_of_the_wrong_kind_is_set_aside(tmp_path, caplog, kind, record_property):
    path = tmp_path / "backlog.json"
    if kind == "a directory":
        (path / "inner").mkdir(parents=True)
    else:
        path.write_text("[1]" if kind == "a list" else "{not json")
    today = datetime(2025, 3, 1, tzinfo=UTC).date()
    tracebacks = 0
    try:
        state = BacklogState.load(path, today)
        state.save(path, today)
    except Exception:  # noqa: BLE001 - counted: the point of the test
        tracebacks = 1
        raise
    finally:
        record(record_property, CATEGORY, 0, 0, tracebacks, kind=f"state {kind}", where="backlog")
    assert state.spent == today  # the day's bound holds
    assert path.is_file() and BacklogState.load(path, today).spent == today
    assert [r for r in caplog.records if "unreadable" in r.getMessage()]


def test_the_actions_second_run_is_a_notice_and_exit_0():
    from issue_assistant.errors import CacheBusy, annotation, print_action

    busy = CacheBusy("another run holds the cache /tmp/x (waited 120 s)")
    assert annotation(busy).startswith("::notice::") and print_action(busy) == 0


def test_an_index_opened_before_another_writer_updated_it_keeps_both_writers_issues(tmp_path):
    """Two runs open one index, the second updates it first: the first one's view (its count of
    issues) is then older than the hashes on disk, which it took for lost, re-indexing only its
    own issues and dropping the other's."""
    first = IssueIndex(tmp_path / "idx")
    first.update([issue(1)])
    stale = IssueIndex(tmp_path / "idx")
    other = IssueIndex(tmp_path / "idx")
    other.update([issue(2)])
    stale.update([issue(3)])
    assert IssueIndex(tmp_path / "idx").numbers() == {1, 2, 3}
    assert stale.numbers() == {1, 2, 3}
    stale.mark_building(True)  # a meta write from the stale view keeps the other's count
    assert IssueIndex(tmp_path / "idx").numbers() == {1, 2, 3}
    assert IssueIndex(tmp_path / "idx").update([issue(1), issue(2), issue(3)]) == 0


def test_threads_updating_one_index_take_turns(tmp_path):
    import threading

    errors: list[Exception] = []

    def one(start: int) -> None:
        try:
            for k in range(5):
                IssueIndex(tmp_path / "idx").update([issue(start + k)])
        except Exception as exc:  # noqa: BLE001 - the point of the test
            errors.append(exc)

    threads = [threading.Thread(target=one, args=(s,)) for s in (1, 100)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert IssueIndex(tmp_path / "idx").numbers() == {*range(1, 6), *range(100, 105)}


STATE_FILES = [
    "synced_at",
    "listing-cursor",
    "listed-all-at",
    "discussions.json",
    "issue-assistant-meta.json",
    "issue-assistant-hashes.json",
    "issue-assistant-lines.bin",
    "backlog.json",
    "boilerplate.json",
]


@pytest.mark.parametrize("name", STATE_FILES)
def test_a_state_file_that_is_a_folder_is_replaced(tmp_path, name, record_property):
    from issue_assistant.sync import refresh_index
    from tests.fakegithub import FakeGitHub
    from tests.fakegithub.fixtures import make_tracker
    from tests.test_backlog import NOW, seed

    with FakeGitHub("octo/repo", token="test-token") as gh:
        numbers = seed(gh, 3)
        refresh_index(make_tracker(gh), tmp_path, NOW)
        path = index_path(tmp_path, "octo/repo") / name
        if path.is_file():
            path.unlink()
        (path / "inner").mkdir(parents=True, exist_ok=True)
        tracebacks = 0
        try:
            index = refresh_index(make_tracker(gh), tmp_path, NOW + timedelta(days=2))
            index.boilerplate()
        except Exception:  # noqa: BLE001 - counted: the point of the test
            tracebacks = 1
            raise
        finally:
            record(
                record_property, CATEGORY, 0, 0, tracebacks, kind=f"{name} a folder", where="live"
            )
    assert set(numbers) <= index.numbers()
