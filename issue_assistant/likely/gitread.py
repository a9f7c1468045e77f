"""Read a git repository without a work tree: its first-parent history, a commit's files (from
the object store, through one `git cat-file --batch`), and what a commit changed.

A checkout of any moment is read from the objects, so indexing 700 moments of a repository
copies nothing to disk; blobs shared by moments are read (and cached) once.
"""

from __future__ import annotations

import re
import subprocess
import threading
from collections import OrderedDict
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from issue_assistant.errors import UserError

_SQUASH = re.compile(r"\(#(\d+)\)\s*$")
_MERGE = re.compile(r"^Merge pull request #(\d+) from ")


@dataclass(frozen=True)
class Commit:
    sha: str
    parents: tuple[str, ...]
    committed: datetime
    subject: str

    @property
    def pull_request(self) -> int | None:
        """The pull request a merge commit says it merged: `… (#12)` or `Merge pull request #12`."""
        m = _SQUASH.search(self.subject) or _MERGE.match(self.subject)
        return int(m[1]) if m else None


@dataclass(frozen=True)
class Change:
    """One path a commit changed: `status` A, M, D, R (renamed), C, T; `old` the path before and
    `blob` its content before (None for an added file)."""

    status: str
    path: str
    old: str | None = None
    blob: str | None = None

    @property
    def before(self) -> str | None:
        """The path as it was in the parent (None for an added file)."""
        if self.status == "A":
            return None
        return self.old or self.path


def git(repo: str | Path, *args: str, data: bytes | None = None, timeout: float = 120) -> bytes:
    """`git --git-dir`-agnostic: `git -C repo ARGS`; a failure is a UserError naming the command."""
    cmd = ["git", "-c", f"safe.directory={Path(repo).resolve()}", "-C", str(repo), *args]
    try:
        out = subprocess.run(cmd, input=data, capture_output=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UserError(f"git {' '.join(args[:2])} failed: {exc}", where=str(repo)) from None
    if out.returncode != 0:
        err = out.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["?"]
        raise UserError(f"git {' '.join(args[:2])} failed: {err[0]}", where=str(repo))
    return out.stdout


def check_repository(repo: str | Path) -> Path:
    """`repo` if it is a git repository (a clone or a bare git directory), else a UserError."""
    root = Path(repo)
    if not root.is_dir():
        raise UserError("no such folder", where=str(root))
    try:
        git(root, "rev-parse", "--git-dir")
    except UserError:
        raise UserError("not a git repository (a clone is needed)", where=str(root)) from None
    return root


def first_parent_log(repo: str | Path, ref: str = "HEAD") -> list[Commit]:
    """The commits of `ref`'s first-parent line (the main branch's own history), oldest first."""
    raw = git(repo, "log", "--first-parent", "--format=%H%x01%P%x01%ct%x01%s%x00", ref)
    out: list[Commit] = []
    for record in raw.decode("utf-8", "replace").split("\0"):
        record = record.strip("\n")
        if not record:
            continue
        sha, parents, stamp, subject = record.split("\x01", 3)
        when = datetime.fromtimestamp(int(stamp), UTC)
        out.append(Commit(sha, tuple(parents.split()), when, subject))
    return out[::-1]


def commit_before(history: list[Commit], when: datetime) -> Commit | None:
    """The last commit of `history` (oldest first) committed strictly before `when`."""
    lo, hi = 0, len(history)
    while lo < hi:
        mid = (lo + hi) // 2
        if history[mid].committed < when:
            lo = mid + 1
        else:
            hi = mid
    return history[lo - 1] if lo else None


def changes(repo: str | Path, parent: str, commit: str) -> list[Change]:
    """The paths `commit` changed against `parent`, renames found (`git diff --raw -M`)."""
    raw = git(repo, "diff", "--raw", "-M", "-z", "--no-color", "--no-abbrev", parent, commit)
    parts = raw.decode("utf-8", "replace").split("\0")
    out: list[Change] = []
    i = 0
    while i < len(parts) and parts[i].startswith(":"):
        meta = parts[i][1:].split()
        status, blob = meta[4][0], meta[2]
        before = None if set(blob) == {"0"} else blob
        if status in "RC":
            out.append(Change(status, parts[i + 2], parts[i + 1], before))
            i += 3
        else:
            out.append(Change(status, parts[i + 1], None, before))
            i += 2
    return out


_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")


def changed_lines(repo: str | Path, parent: str, commit: str) -> dict[str, list[tuple[int, int]]]:
    """Per path (as in the parent), the line ranges (first, last; 1-based, in the parent's
    version) `commit` touched: one `git diff -U0`. A pure insertion is given as the line after
    which it was inserted; an added file has no entry."""
    raw = git(repo, "-c", "core.quotePath=false", "diff", "-U0", "--no-color", "-M", parent, commit)
    out: dict[str, list[tuple[int, int]]] = {}
    current: list[tuple[int, int]] | None = None
    for line in raw.decode("utf-8", "replace").splitlines():
        if line.startswith("diff --git "):
            current = None
        elif line.startswith("--- "):
            name = line[4:]
            current = None if name == "/dev/null" else out.setdefault(name[2:], [])
        elif line.startswith("@@") and current is not None:
            m = _HUNK.match(line)
            if m:
                start, count = int(m[1]), int(m[2]) if m[2] is not None else 1
                current.append((max(start, 1), max(start + count - 1, start, 1)))
    return out


@dataclass(frozen=True)
class TreeEntry:
    path: str
    blob: str
    size: int


class ObjectReader:
    """Trees and blobs of one repository through long-lived `git cat-file --batch` (thread-safe).

    Blob texts are cached (least recently used, up to `cache_bytes`), so moments that share a
    file read it once.
    """

    def __init__(self, repo: str | Path, cache_bytes: int = 400_000_000) -> None:
        self.repo = check_repository(repo)
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._cache: OrderedDict[str, bytes] = OrderedDict()
        self._cached = 0
        self._limit = cache_bytes
        self.read_bytes = 0  # read from git (not from the cache), for the benchmark

    def tree(self, commit: str) -> list[TreeEntry]:
        """Every file of `commit` (regular files and executables; no symlinks, submodules or
        objects missing from the clone)."""
        raw = git(self.repo, "ls-tree", "-r", "-l", "-z", "--full-tree", commit)
        out: list[TreeEntry] = []
        for record in raw.decode("utf-8", "replace").split("\0"):
            if not record:
                continue
            meta, path = record.split("\t", 1)
            mode, kind, blob, size = meta.split()
            # a size of "BAD": the object is missing (a partial clone): left out
            if kind == "blob" and mode in ("100644", "100755") and size.isdigit():
                out.append(TreeEntry(path, blob, int(size)))
        return out

    def _start(self) -> subprocess.Popen[bytes]:
        if self._proc is None or self._proc.poll() is not None:
            self._proc = subprocess.Popen(
                ["git", "-c", f"safe.directory={self.repo.resolve()}", "-C", str(self.repo)]
                + ["cat-file", "--batch"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
            )
        return self._proc

    def blob(self, sha: str) -> bytes:
        """The blob's bytes (KeyError when the object is missing)."""
        with self._lock:
            hit = self._cache.get(sha)
            if hit is not None:
                self._cache.move_to_end(sha)
                return hit
            proc = self._start()
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(sha.encode() + b"\n")
            proc.stdin.flush()
            header = proc.stdout.readline().split()
            if len(header) < 3 or header[1] == b"missing":
                raise KeyError(sha)
            size = int(header[2])
            data = proc.stdout.read(size)
            proc.stdout.read(1)  # the newline after the object
            self.read_bytes += size
            self._cache[sha] = data
            self._cached += size
            while self._cached > self._limit and self._cache:
                _, old = self._cache.popitem(last=False)
                self._cached -= len(old)
            return data

    def show(self, commit: str, path: str) -> bytes | None:
        """The file at `path` in `commit` (None when absent)."""
        raw = git(self.repo, "ls-tree", "-z", commit, "--", path)
        record = raw.decode("utf-8", "replace").split("\0")[0]
        if not record:
            return None
        blob = record.split("\t", 1)[0].split()[2]
        return self.blob(blob)

    def close(self) -> None:
        with self._lock:
            if self._proc is not None:
                if self._proc.stdin:
                    self._proc.stdin.close()
                self._proc.wait(timeout=10)
                self._proc = None

    def __enter__(self) -> ObjectReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
