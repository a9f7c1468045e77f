"""Issue vectors kept beside the tantivy index: computed once per issue text, only ever appended.

Two raw files grow at the end: `vectors.f32` (384 float32 per row, unit rows) and
`vector-rows.bin` (per row the issue number, its creation time in seconds and the fingerprint of
the embedded text), and `vectors.json` names how many rows are committed (rows past it are an
interrupted append, cut off by the next one). A changed text appends a new row for the issue:
the last row of a number is its vector, the older ones are skipped, and the files are rewritten
only when those make up more than `COMPACT_SHARE` of them. Both files are memory-mapped on open,
so a warm search reads no more than it scores, and a checkpoint writes only its new rows (the
first format rewrote every vector at every checkpoint: quadratic I/O over a large first build).
A store of that first format (`vectors.npy`) is converted once.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import time
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path
from typing import Protocol

import numpy as np

from issue_assistant.atomic import write_atomic, write_atomic_with
from issue_assistant.index.query import problem_text
from issue_assistant.tracker.models import Issue

log = logging.getLogger(__name__)

VECTORS = "vectors.f32"
ROWS = "vector-rows.bin"
INFO = "vectors.json"
FORMAT = 2
OLD_VECTORS, OLD_ROWS = "vectors.npy", "vector-rows.npy"  # the first format
ROW_TYPE = np.dtype([("number", "<i8"), ("created", "<i8"), ("fp", "<u8")])
COMPACT_SHARE = 0.25


def text_fingerprint(text: str) -> int:
    return int.from_bytes(hashlib.sha1(text.encode()).digest()[:8], "little")


def _seconds(moment: datetime) -> int:
    return int(moment.timestamp())


class TextVectors(Protocol):
    """Text to unit vectors: sentence embeddings (`embeddings.Embedder`) or the shipped word
    vectors (`word_vectors.WordVectors`)."""

    model_id: str
    dim: int

    def embed_one(self, text: str) -> np.ndarray: ...


class VectorStore:
    """The vectors of a repository's issues (pull requests are never candidates: not kept)."""

    def __init__(self, path: Path, model_id: str, dim: int) -> None:
        self.path = path
        self.model_id = model_id
        self.dim = dim
        self._convert_first_format()
        self._load()

    # ---- reading ---------------------------------------------------------------------------

    def _read_info(self) -> dict:
        try:
            info = json.loads((self.path / INFO).read_text())
        except (OSError, ValueError, RecursionError):
            return {}
        return info if isinstance(info, dict) else {"bad": "vectors.json is not an object"}

    def _problem(self) -> str | None:
        """Why the stored files cannot be used as they are (None: usable, or nothing stored)."""
        info = self._read_info()
        if "bad" in info:
            return info["bad"]
        if (self.path / INFO).exists() and not (self.path / INFO).is_file():
            return f"{INFO} is not a file"
        if not info or info.get("model") != self.model_id or info.get("format") != FORMAT:
            return None  # another model or format: nothing committed, rebuilt by appending
        rows = info.get("rows", 0)
        if not isinstance(rows, int) or isinstance(rows, bool) or rows < 0:
            return f"rows is {rows!r}, not a count"
        if info.get("dim", self.dim) != self.dim:
            return f"dim is {info.get('dim')!r}, not {self.dim}"
        for name in (INFO, VECTORS, ROWS):
            where = self.path / name
            if where.exists() and not where.is_file():
                return f"{name} is not a file"
        return None

    def _committed(self) -> int:
        info = self._read_info()
        if info.get("model") != self.model_id or info.get("format") != FORMAT:
            return 0
        try:
            size = min(
                (self.path / VECTORS).stat().st_size // (4 * self.dim),
                (self.path / ROWS).stat().st_size // ROW_TYPE.itemsize,
            )
        except OSError:
            return 0
        return min(int(info.get("rows", 0)), size)

    def _load(self) -> None:
        problem = self._problem()
        if problem is not None:
            self._reset(problem)
        n = self._committed()
        if n:
            self.vectors = np.memmap(self.path / VECTORS, np.float32, "r", shape=(n, self.dim))
            self.rows = np.memmap(self.path / ROWS, ROW_TYPE, "r", shape=(n,))
            if (np.asarray(self.rows["number"]) <= 0).any():
                self._reset("a row with a number that is not positive")
                return self._load()
        else:
            self.vectors = np.zeros((0, self.dim), dtype=np.float32)
            self.rows = np.zeros(0, dtype=ROW_TYPE)
        self._row_of: dict[int, int] | None = None
        self._live: np.ndarray | None = None

    def _reset(self, problem: str) -> None:
        """The stored files removed, in one logged line: the vectors are computed again."""
        log.warning("vectors: %s cannot be used (%s); rebuilt", self.path, problem)
        for name in (INFO, VECTORS, ROWS):
            where = self.path / name
            if where.is_dir() and not where.is_symlink():
                shutil.rmtree(where, ignore_errors=True)
            else:
                where.unlink(missing_ok=True)

    def __len__(self) -> int:
        """How many issues have a vector (superseded rows not counted)."""
        return len(self.row_of)

    @property
    def row_of(self) -> dict[int, int]:
        """Each number's row: its last one."""
        if self._row_of is None:
            self._row_of = {int(n): i for i, n in enumerate(self.rows["number"])}
        return self._row_of

    @property
    def live(self) -> np.ndarray:
        """Per row, whether it is its number's last (older rows of a number are superseded)."""
        if self._live is None:
            numbers = np.asarray(self.rows["number"])
            last = len(numbers) - 1 - np.unique(numbers[::-1], return_index=True)[1]
            self._live = np.zeros(len(numbers), dtype=bool)
            self._live[last] = True
        return self._live

    def vector(self, number: int, text: str | None = None) -> np.ndarray | None:
        """The stored vector of `number` (only if it was made from `text`, when given)."""
        row = self.row_of.get(number)
        if row is None:
            return None
        if text is not None and int(self.rows["fp"][row]) != text_fingerprint(text):
            return None
        vec = np.asarray(self.vectors[row])
        return vec if np.isfinite(vec).all() else None

    def missing(self, issues: Iterable[Issue]) -> list[tuple[Issue, str]]:
        """Issues whose vector is absent or was made from another text, with their text."""
        out = []
        for issue in issues:
            if issue.is_pull_request:
                continue
            text = problem_text(issue.title, issue.body)
            row = self.row_of.get(issue.number)
            if row is None or int(self.rows["fp"][row]) != text_fingerprint(text):
                out.append((issue, text))
        return out

    # ---- writing ---------------------------------------------------------------------------

    def update(
        self,
        todo: list[tuple[Issue, str]],
        embed: Callable[[str], np.ndarray],
        *,
        budget_s: float | None = None,
        progress: Callable[[int, int], None] | None = None,
        checkpoint: int = 256,
    ) -> int:
        """Embed `todo`, newest first, appending every `checkpoint` rows (so an interrupted or
        time-boxed build goes on where it stopped next time); returns the rows written."""
        if not todo:
            return 0
        by_fp = {int(fp): i for i, fp in enumerate(self.rows["fp"])}
        fresh: dict[int, np.ndarray] = {}
        rows: list[tuple[int, int, int]] = []
        vecs: list[np.ndarray] = []
        written = 0
        start = time.monotonic()
        ordered = sorted(todo, key=lambda t: t[0].created_at, reverse=True)
        for done, (issue, text) in enumerate(ordered):
            if budget_s is not None and time.monotonic() - start > budget_s:
                left = len(ordered) - done
                log.info("vectors: %d of %d left for the next run", left, len(ordered))
                break
            fp = text_fingerprint(text)
            if fp in fresh:
                vec = fresh[fp]
            elif fp in by_fp:
                vec = np.asarray(self.vectors[by_fp[fp]])
            else:
                vec = fresh[fp] = embed(text)
            rows.append((issue.number, _seconds(issue.created_at), fp))
            vecs.append(vec)
            if progress:
                progress(done + 1, len(ordered))
            if len(rows) >= checkpoint:
                written += self._append(rows, vecs)
                rows, vecs = [], []
        if rows:
            written += self._append(rows, vecs)
        if (~self.live).sum() > COMPACT_SHARE * max(len(self.rows), 1):
            self._compact()
        return written

    def remove(self, numbers: Iterable[int]) -> int:
        """Drop the rows of `numbers` (issues gone from the tracker); returns how many."""
        gone = np.isin(np.asarray(self.rows["number"]), np.fromiter(set(numbers), dtype=np.int64))
        if not gone.any():
            return 0
        keep = np.flatnonzero(~gone)
        self._rewrite(np.asarray(self.rows[keep]), np.asarray(self.vectors[keep]))
        return int(gone.sum())

    def _append(self, new_rows: list[tuple[int, int, int]], new_vecs: list[np.ndarray]) -> int:
        """Write the new rows at the end of both files, then commit their count."""
        self.path.mkdir(parents=True, exist_ok=True)
        n = self._committed()
        rows = np.array(new_rows, dtype=ROW_TYPE)
        vecs = np.stack(new_vecs).astype(np.float32)
        for name, data, width in ((VECTORS, vecs, 4 * self.dim), (ROWS, rows, ROW_TYPE.itemsize)):
            with open(self.path / name, "ab") as fh:
                fh.truncate(n * width)  # an append cut short before its count was committed
                fh.write(data.tobytes())
                fh.flush()
                os.fsync(fh.fileno())
        self._write_info(n + len(rows))
        self._load()
        return len(rows)

    def _write_info(self, rows: int) -> None:
        info = {"model": self.model_id, "dim": self.dim, "rows": rows, "format": FORMAT}
        write_atomic(self.path / INFO, json.dumps(info), own=True)

    def _compact(self) -> None:
        """Rewrite the files with each number's last row only."""
        keep = np.flatnonzero(self.live)
        self._rewrite(np.asarray(self.rows[keep]), np.asarray(self.vectors[keep]))

    def _rewrite(self, rows: np.ndarray, vecs: np.ndarray) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        self._write_info(0)  # nothing committed while the files are replaced
        for name, data in ((VECTORS, vecs.astype(np.float32)), (ROWS, rows.astype(ROW_TYPE))):
            write_atomic_with(
                self.path / name, lambda fh, data=data: fh.write(data.tobytes()), own=True
            )
        self._write_info(len(rows))
        self._load()

    def _convert_first_format(self) -> None:
        """A store of the first format (`.npy` files) rewritten once in this one."""
        old = self.path / OLD_VECTORS
        if not old.is_file() or self._read_info().get("model") != self.model_id:
            return
        try:
            vecs = np.load(old, mmap_mode="r")
            rows = np.load(self.path / OLD_ROWS, mmap_mode="r")
        except (OSError, ValueError):
            return
        self._rewrite(np.asarray(rows), np.asarray(vecs))
        old.unlink(missing_ok=True)
        (self.path / OLD_ROWS).unlink(missing_ok=True)
        log.info("vectors: %d converted to the append-only store", len(rows))

    # ---- search ----------------------------------------------------------------------------

    def nearest(
        self, query: np.ndarray, *, before: datetime, exclude: int | None, limit: int
    ) -> list[tuple[int, float]]:
        """(number, cosine) of the closest issues created strictly before `before`.

        A full scan (one matrix-vector product over the memory-mapped rows, no copy); rows
        created later, superseded or excluded are masked out of the scores."""
        if not len(self.rows):
            return []
        numbers = np.array(self.rows["number"])  # a copy: a heal below rewrites the rows
        ok = (np.asarray(self.rows["created"]) < _seconds(before)) & self.live
        if exclude is not None:
            ok &= numbers != exclude
        count = int(ok.sum())
        if not count:
            return []
        scores = np.asarray(self.vectors) @ query.astype(np.float32)
        bad = ~np.isfinite(scores)
        if bad.any():  # a row that is not a vector (NaN, inf): never served, dropped
            log.warning("vectors: %d stored ones are not finite; recomputed", int(bad.sum()))
            ok &= ~bad
            self.remove(int(n) for n in numbers[bad])
            count = int(ok.sum())
            if not count:
                return []
        scores[~ok] = -np.inf
        k = min(limit, count)
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(int(numbers[i]), float(scores[i])) for i in top]
