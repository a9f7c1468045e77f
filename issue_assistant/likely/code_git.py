"""The code index of any commit of a clone, read from the git objects (no checkout on disk).

The same files as a checkout folder would give (`code.list_files`'s skips, no binaries, nothing
over the size cap). `CommitIndexes` keeps the analysed fields of every blob it has seen, so the
indexes of many nearby commits (one per replayed issue) analyse each file version once.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path

from issue_assistant.likely.checkout import skipped
from issue_assistant.likely.code import CodeIndex, SourceFile
from issue_assistant.likely.gitread import ObjectReader, TreeEntry

BINARY_SUFFIXES = (".zip", ".gz", ".tgz", ".bz2", ".xz", ".arrow", ".parquet", ".png", ".jpg")


def wanted_entries(reader: ObjectReader, commit: str, max_file_kb: int) -> list[TreeEntry]:
    """The files of `commit` that may be indexed, in path order (before reading them)."""
    out = []
    for entry in sorted(reader.tree(commit), key=lambda e: e.path):
        if entry.size > max_file_kb * 1024 or entry.path.lower().endswith(BINARY_SUFFIXES):
            continue
        if not skipped(entry.path):
            out.append(entry)
    return out


def _source(reader: ObjectReader, entry: TreeEntry) -> SourceFile | None:
    try:
        data = reader.blob(entry.blob)
    except KeyError:
        return None  # missing from a partial clone
    if b"\0" in data[:8192]:
        return None
    return SourceFile(entry.path, data.decode("utf-8", "replace"), entry.blob)


def commit_files(
    reader: ObjectReader, commit: str, *, max_file_kb: int = 256, max_files: int = 20_000
) -> Iterator[SourceFile]:
    """The indexable files of `commit`, in path order, keyed by blob."""
    count = 0
    for entry in wanted_entries(reader, commit, max_file_kb):
        if count >= max_files:
            return
        f = _source(reader, entry)
        if f is not None:
            count += 1
            yield f


class CommitIndexes:
    """Code indexes of a clone's commits: built on demand, the last `keep` kept, fields memoised
    (`keep=0`: one index moved from commit to commit, for a replay in time order)."""

    def __init__(
        self,
        clone: str | Path,
        *,
        max_file_kb: int = 256,
        max_files: int = 20_000,
        keep: int = 2,
        rebuild_after: float = 0.05,
        memo: dict[str, tuple[str, str]] | None = None,
    ) -> None:
        self.reader = ObjectReader(clone)
        self.max_file_kb = max_file_kb
        self.max_files = max_files
        self.keep = keep
        # each content's fields, kept across indexes (and shared with others when given)
        self.memo: dict[str, tuple[str, str]] = {} if memo is None else memo
        self._open: OrderedDict[str, CodeIndex] = OrderedDict()
        self._lock = threading.Lock()
        # keep=0: rebuild from scratch once this share of the documents changed since the last
        # build (a deleted document still counts in tantivy's BM25 statistics until merged)
        self.rebuild_after = rebuild_after
        self._changed = 0
        self.builds = 0

    def at(self, commit: str) -> CodeIndex:
        """The code index of `commit` (full 40-hex id). With `keep=0` one index is moved from
        commit to commit (only changed files re-indexed): the one returned before changes."""
        with self._lock:
            hit = self._open.get(commit)
            if hit is not None:
                self._open.move_to_end(commit)
                return hit
            index = None
            if self.keep == 0 and self._open:
                _, index = self._open.popitem()
                self._move(index, commit)
                if self._changed > self.rebuild_after * max(len(index), 1):
                    index = None
            if index is None:
                files = commit_files(
                    self.reader, commit, max_file_kb=self.max_file_kb, max_files=self.max_files
                )
                index = CodeIndex.from_files(files, sha=commit, memo=self.memo)
                self._changed = 0
                self.builds += 1
            self._open[commit] = index
            while len(self._open) > max(self.keep, 1):
                self._open.popitem(last=False)
            return index

    def _move(self, index: CodeIndex, commit: str) -> None:
        entries = {e.path: e for e in wanted_entries(self.reader, commit, self.max_file_kb)}
        removed = [p for p in index.files if p not in entries or entries[p].blob != index.keys[p]]
        kept = len(index.files) - len(removed)
        added = []
        for path, e in entries.items():
            if index.keys.get(path) == e.blob and path in index.files:
                continue
            if kept + len(added) >= self.max_files:
                break
            f = _source(self.reader, e)
            if f is not None:
                added.append(f)
        index.change(removed, added, sha=commit, memo=self.memo)
        self._changed += len(removed) + len(added)

    def close(self) -> None:
        self.reader.close()
