"""The checkout the file tools read: read-only and confined to it.

`Checkout.resolve` accepts only relative paths without `..`, outside ignored folders, whose real
path (symlinks resolved) stays inside the root. Files over `MAX_FILE_BYTES` and binaries are not
read. Problems come back as a `ToolFailure` the model can read.
"""

from __future__ import annotations

import os
import re
import stat
import time
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

import pathspec

from issue_assistant.errors import ToolFailure, UserError
from issue_assistant.likely.checkout import WALK_MAX, WALK_SECONDS

IGNORED_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        "bower_components",
        "vendor",
        "vendored",
        "third_party",
        "third-party",
        ".venv",
        "venv",
        "site-packages",
        "__pycache__",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".eggs",
        "dist",
        "build",
        "target",
        ".next",
        ".cache",
    }
)
MAX_FILE_BYTES = 1_000_000
_DRIVE = re.compile(r"^[A-Za-z]:")


class Checkout:
    """A checkout root the file tools are confined to."""

    def __init__(self, root: str | Path) -> None:
        try:
            self.root = Path(root).resolve(strict=True)
        except (OSError, RuntimeError):
            raise UserError("no such checkout directory", where=str(root)) from None
        if not self.root.is_dir():
            raise UserError("the checkout is not a directory", where=str(root))
        gitignore = self.root / ".gitignore"
        lines = gitignore.read_text("utf-8", "replace").splitlines() if gitignore.is_file() else []
        self._ignore = pathspec.GitIgnoreSpec.from_lines(lines)

    def is_ignored(self, rel: str, is_dir: bool = False) -> bool:
        parts = rel.split("/")
        folders = parts if is_dir else parts[:-1]
        if any(p in IGNORED_DIRS or p.endswith(".egg-info") for p in folders):
            return True
        return self._ignore.match_file(rel + "/" if is_dir else rel)

    def resolve(self, path: str) -> tuple[str, Path]:
        """(the path relative to the root, the real file) or a ToolFailure saying why not."""
        text = path.strip()
        if not text or "\x00" in text:
            raise ToolFailure("give a file path relative to the repository root")
        if text.startswith(("/", "\\", "~")) or _DRIVE.match(text) or "\\" in text:
            raise ToolFailure(
                f"{path!r}: only paths relative to the repository root, with '/', are allowed"
            )
        parts = [p for p in PurePosixPath(text).parts if p != "."]
        if ".." in parts:
            raise ToolFailure(f"{path!r}: '..' is not allowed in a path")
        rel = "/".join(parts)
        if not rel:
            raise ToolFailure("give a file path, not the root")
        if self.is_ignored(rel):
            raise ToolFailure(f"{rel}: the path is ignored (.git, vendored, build or .gitignore)")
        try:
            real = (self.root / rel).resolve(strict=True)
        except (OSError, RuntimeError):
            raise ToolFailure(f"{rel}: no such file") from None
        if not real.is_relative_to(self.root):
            raise ToolFailure(f"{rel}: the path leads outside the checkout")
        real_rel = real.relative_to(self.root).as_posix()
        if real_rel != "." and self.is_ignored(real_rel):
            raise ToolFailure(f"{rel}: the path leads into an ignored folder")
        return rel, real

    def walk(self) -> Iterator[tuple[str, Path]]:
        """Every file not ignored, in path order; symlinked folders are not followed and
        symlinked files only when they stay inside the root."""
        seen, deadline = 0, time.monotonic() + WALK_SECONDS
        for dirpath, dirnames, filenames in os.walk(self.root, followlinks=False):
            seen += len(filenames) + len(dirnames)
            if seen > WALK_MAX or time.monotonic() > deadline:  # `/` or a home folder
                return
            base = Path(dirpath)
            prefix = base.relative_to(self.root).as_posix()
            prefix = "" if prefix == "." else prefix + "/"
            dirnames[:] = sorted(
                d
                for d in dirnames
                if not (base / d).is_symlink() and not self.is_ignored(prefix + d, is_dir=True)
            )
            for name in sorted(filenames):
                rel = prefix + name
                if self.is_ignored(rel):
                    continue
                full = base / name
                if full.is_symlink():
                    try:
                        self.resolve(rel)
                    except ToolFailure:
                        continue
                yield rel, full

    def files(self, glob: str | None) -> Iterator[str]:
        spec = _glob(glob)
        for rel, _ in self.walk():
            if spec is None or spec.match_file(rel):
                yield rel

    @staticmethod
    def text(path: Path, rel: str) -> str:
        """A file's text, or a ToolFailure when it is too large, binary or not a regular file.

        Opened without blocking and checked on the open file: a FIFO or a device (or a file
        swapped for one after a check) is never read."""
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
        except OSError as exc:
            raise ToolFailure(f"{rel}: cannot be read ({exc.strerror or exc})") from None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise ToolFailure(f"{rel}: not a regular file, not read")
            os.set_blocking(fd, True)
            with os.fdopen(fd, "rb", closefd=False) as fh:
                data = fh.read(MAX_FILE_BYTES + 1)
        except OSError as exc:
            raise ToolFailure(f"{rel}: cannot be read ({exc.strerror or exc})") from None
        finally:
            os.close(fd)
        if len(data) > MAX_FILE_BYTES:
            raise ToolFailure(f"{rel}: larger than {MAX_FILE_BYTES // 1000} kB, not read")
        if b"\x00" in data[:8192]:
            raise ToolFailure(f"{rel}: a binary file, not read")
        return data.decode("utf-8", "replace")


def _glob(glob: str | None) -> pathspec.PathSpec | None:
    if glob is None or glob.strip() in ("", "*", "**", "**/*"):
        return None
    text = glob.strip()
    if text.startswith(("!", "#")) or "\\" in text or ".." in PurePosixPath(text).parts:
        raise ToolFailure(f"{glob!r}: not a usable glob (e.g. '*.py', 'src/**/*.md')")
    return pathspec.GitIgnoreSpec.from_lines([text])
