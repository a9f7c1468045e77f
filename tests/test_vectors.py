"""The vector store appends: a checkpoint writes its new rows only, a changed text supersedes
the old row, an interrupted append is cut off, and the first format is converted once."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from issue_assistant.index import vectors as vmod
from issue_assistant.index.vectors import VectorStore
from issue_assistant.tracker.models import Issue, User

DIM = 8
T0 = datetime(2024, 1, 1, tzinfo=UTC)


def embed(text: str) -> np.ndarray:
    seed = int.from_bytes(hashlib.sha1(text.encode()).digest()[:4], "little")
    v = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return v / np.linalg.norm(v)


def issue(n: int, body: str = "") -> Issue:
    return Issue(
        number=n,
        title=f"Issue {n}",
        body=body or f"text of issue {n}",
        user=User(login="u"),
        created_at=T0 + timedelta(hours=n),
    )


def store(tmp_path) -> VectorStore:  # noqa: ANN001
    return VectorStore(tmp_path / "vectors", "test-model", DIM)


def test_checkpoints_append_only_their_rows(tmp_path, monkeypatch):
    s = store(tmp_path)
    written: list[int] = []
    real = vmod.VectorStore._append

    def spy(self, rows, vecs):  # noqa: ANN001, ANN202
        before = (self.path / vmod.VECTORS).stat().st_size if self._committed() else 0
        out = real(self, rows, vecs)
        written.append((self.path / vmod.VECTORS).stat().st_size - before)
        return out

    monkeypatch.setattr(vmod.VectorStore, "_append", spy)
    first = [issue(n) for n in range(1, 101)]
    assert s.update(s.missing(first), embed, checkpoint=16) == 100
    # every checkpoint wrote its own rows, never the earlier ones again
    assert written == [16 * DIM * 4] * 6 + [4 * DIM * 4]
    head = (s.path / vmod.VECTORS).read_bytes()
    s.update(s.missing([issue(n) for n in range(101, 111)]), embed, checkpoint=16)
    assert (s.path / vmod.VECTORS).read_bytes()[: len(head)] == head
    again = store(tmp_path)
    assert len(again) == 110
    assert np.allclose(again.vector(7), embed(vmod.problem_text("Issue 7", "text of issue 7")))


def test_a_changed_text_supersedes_its_row_and_search_skips_the_old(tmp_path):
    s = store(tmp_path)
    issues = [issue(n) for n in range(1, 21)]
    s.update(s.missing(issues), embed)
    edited = issue(5, "a wholly new text")
    assert [i.number for i, _ in s.missing([edited])] == [5]
    s.update(s.missing([edited]), embed)
    assert len(s) == 20 and len(s.rows) == 21  # appended, the old row kept until compaction
    query = embed(vmod.problem_text("Issue 5", "text of issue 5"))  # the old text
    found = s.nearest(query, before=T0 + timedelta(days=9), exclude=None, limit=20)
    assert [n for n, _ in found].count(5) == 1
    old_score = float(query @ embed(vmod.problem_text("Issue 5", "text of issue 5")))
    assert dict(found)[5] < old_score - 1e-3  # the new vector answered, not the old one
    # the as-of filter and the exclusion are kept
    early = s.nearest(query, before=T0 + timedelta(hours=4), exclude=2, limit=10)
    assert {n for n, _ in early} == {1, 3}


def test_many_superseded_rows_are_compacted(tmp_path):
    s = store(tmp_path)
    issues = [issue(n) for n in range(1, 11)]
    s.update(s.missing(issues), embed)
    s.update(s.missing([issue(n, f"new {n}") for n in range(1, 5)]), embed)
    assert len(s.rows) == 10 and len(s) == 10  # 4 of 14 superseded: over 25%, rewritten
    assert s.vector(3, vmod.problem_text("Issue 3", "new 3")) is not None


def test_an_interrupted_append_is_cut_off(tmp_path):
    s = store(tmp_path)
    s.update(s.missing([issue(n) for n in range(1, 6)]), embed)
    with open(s.path / vmod.VECTORS, "ab") as fh:  # rows written, count never committed
        fh.write(b"\x00" * DIM * 4 * 3)
    again = store(tmp_path)
    assert len(again) == 5
    again.update(again.missing([issue(6)]), embed)
    assert (s.path / vmod.VECTORS).stat().st_size == 6 * DIM * 4
    assert len(store(tmp_path)) == 6


def test_a_store_of_the_first_format_is_converted_once(tmp_path):
    folder = tmp_path / "vectors"
    folder.mkdir()
    rows = np.array([(n, n * 3600, n) for n in (1, 2)], dtype=vmod.ROW_TYPE)
    vecs = np.stack([embed("a"), embed("b")])
    np.save(folder / vmod.OLD_VECTORS, vecs)
    np.save(folder / vmod.OLD_ROWS, rows)
    (folder / vmod.INFO).write_text('{"model": "test-model", "dim": 8, "rows": 2}')
    s = store(tmp_path)
    assert len(s) == 2 and np.allclose(s.vector(2), embed("b"))
    assert not (folder / vmod.OLD_VECTORS).exists()
    assert store(tmp_path).vector(1) == pytest.approx(embed("a"))
