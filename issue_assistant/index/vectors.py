"""Issue vectors kept beside the tantivy index: computed once per issue text, updated in place.

Two numpy files: `vectors.npy` (n x 384 float32, unit rows) and `vector-rows.npy` (per row the
issue number, its creation time in seconds and the fingerprint of the embedded text). Both are
memory-mapped on open, so a warm search reads no more than the rows it scores. A row whose text
fingerprint has not changed is never embedded again; identical texts share one computation.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path

import numpy as np

from issue_assistant.atomic import write_atomic_with
from issue_assistant.index.query import problem_text
from issue_assistant.tracker.models import Issue

log = logging.getLogger(__name__)

VECTORS = "vectors.npy"
ROWS = "vector-rows.npy"
INFO = "vectors.json"
ROW_TYPE = np.dtype([("number", "<i8"), ("created", "<i8"), ("fp", "<u8")])


def text_fingerprint(text: str) -> int:
    return int.from_bytes(hashlib.sha1(text.encode()).digest()[:8], "little")


def _seconds(moment: datetime) -> int:
    return int(moment.timestamp())


class VectorStore:
    """The vectors of a repository's issues (pull requests are never candidates: not kept)."""

    def __init__(self, path: Path, model_id: str, dim: int) -> None:
        self.path = path
        self.model_id = model_id
        self.dim = dim
        self._load()

    def _load(self) -> None:
        info = self._read_info()
        if info.get("model") == self.model_id and (self.path / VECTORS).is_file():
            self.vectors = np.load(self.path / VECTORS, mmap_mode="r")
            self.rows = np.load(self.path / ROWS, mmap_mode="r")
        else:
            self.vectors = np.zeros((0, self.dim), dtype=np.float32)
            self.rows = np.zeros(0, dtype=ROW_TYPE)
        self._row_of: dict[int, int] | None = None

    def _read_info(self) -> dict:
        try:
            return json.loads((self.path / INFO).read_text())
        except (OSError, ValueError):
            return {}

    def __len__(self) -> int:
        return len(self.rows)

    @property
    def row_of(self) -> dict[int, int]:
        if self._row_of is None:
            self._row_of = {int(n): i for i, n in enumerate(self.rows["number"])}
        return self._row_of

    def vector(self, number: int, text: str | None = None) -> np.ndarray | None:
        """The stored vector of `number` (only if it was made from `text`, when given)."""
        row = self.row_of.get(number)
        if row is None:
            return None
        if text is not None and int(self.rows["fp"][row]) != text_fingerprint(text):
            return None
        return np.asarray(self.vectors[row])

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

    def update(
        self,
        todo: list[tuple[Issue, str]],
        embed: Callable[[str], np.ndarray],
        *,
        budget_s: float | None = None,
        progress: Callable[[int, int], None] | None = None,
        checkpoint: int = 256,
    ) -> int:
        """Embed `todo`, newest first, saving every `checkpoint` rows (so an interrupted or
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
                log.info("embeddings: %d of %d left for the next run", left, len(ordered))
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
                written += self._merge(rows, vecs)
                by_fp = {int(fp): i for i, fp in enumerate(self.rows["fp"])}
                rows, vecs = [], []
        if rows:
            written += self._merge(rows, vecs)
        return written

    def _merge(self, new_rows: list[tuple[int, int, int]], new_vecs: list[np.ndarray]) -> int:
        replaced = np.fromiter((n for n, _, _ in new_rows), dtype=np.int64)
        keep = ~np.isin(self.rows["number"], replaced)
        rows = np.concatenate([np.asarray(self.rows[keep]), np.array(new_rows, dtype=ROW_TYPE)])
        vecs = np.concatenate([np.asarray(self.vectors[keep]), np.stack(new_vecs)])
        self._save(rows, vecs.astype(np.float32))
        return len(new_rows)

    def _save(self, rows: np.ndarray, vecs: np.ndarray) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        for name, data in ((VECTORS, vecs), (ROWS, rows)):
            write_atomic_with(self.path / name, lambda fh, data=data: np.save(fh, data))
        info = {"model": self.model_id, "dim": self.dim, "rows": len(rows)}
        (self.path / INFO).write_text(json.dumps(info))
        self._load()

    def nearest(
        self, query: np.ndarray, *, before: datetime, exclude: int | None, limit: int
    ) -> list[tuple[int, float]]:
        """(number, cosine) of the closest issues created strictly before `before`."""
        if not len(self.rows):
            return []
        ok = self.rows["created"] < _seconds(before)
        if exclude is not None:
            ok &= self.rows["number"] != exclude
        idx = np.flatnonzero(ok)
        if not len(idx):
            return []
        scores = np.asarray(self.vectors[idx] if len(idx) < len(ok) else self.vectors) @ query
        k = min(limit, len(idx))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top])]
        return [(int(self.rows["number"][idx[i]]), float(scores[i])) for i in top]
