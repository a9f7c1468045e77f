"""The checkout's files: which are indexed (`git ls-files`, else a walk, less vendored,
generated, binary, symlinked and oversized files), their kind (source, test, doc), and which
checkout `[code] checkout` names."""

from __future__ import annotations

import logging
import os
import re
import subprocess
import time
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import Literal

SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        "vendor",
        "vendored",
        "third_party",
        "third-party",
        "build",
        "dist",
        "target",
        "out",
        "__pycache__",
        ".venv",
        "venv",
        "env",
        ".tox",
        ".nox",
        "site-packages",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".cache",
        "coverage",
        "htmlcov",
        ".next",
        ".idea",
        ".vscode",
        "bower_components",
        "Pods",
        "generated",
        "_build",
    }
)
log = logging.getLogger(__name__)

# A folder that is not a git checkout is walked for at most this many names or seconds (a
# checkout given as `/` or a home folder must not hold up a start).
WALK_MAX = 200_000
WALK_SECONDS = 10.0

SKIP_SUFFIXES = (".min.js", ".min.css", ".map", ".lock", ".svg", ".pb.go", "_pb2.py")
SKIP_NAMES = frozenset({"package-lock.json", "yarn.lock", "pnpm-lock.yaml", "poetry.lock"})
Kind = Literal["source", "test", "doc"]
_TEST = re.compile(r"(^|/)(tests?|testing)/|(^|/)test_[^/]*$|_tests?\.py$|(^|/)conftest\.py$")
_DOC = re.compile(r"\.(md|mdx|rst|txt|adoc|ipynb)$", re.IGNORECASE)
_DOC_DIRS = ("docs/", "doc/", "notebooks/")


def file_kind(path: str) -> Kind:
    """test (tests/, test_*.py, conftest.py), doc (docs/, Markdown, a changelog), else source."""
    if _TEST.search(path):
        return "test"
    name = PurePosixPath(path).name.upper()
    if path.startswith(_DOC_DIRS) or _DOC.search(path) or name.startswith(("CHANGELOG", "CHANGES")):
        return "doc"
    return "source"


@lru_cache(maxsize=65536)
def skipped(path: str) -> bool:
    p = PurePosixPath(path)
    if any(part in SKIP_DIRS for part in p.parts[:-1]):
        return True
    return p.name in SKIP_NAMES or p.name.endswith(SKIP_SUFFIXES)


def _git(root: Path) -> list[str]:
    """git for `root`, trusted even when another user owns it (the Action's container runs as
    root over the runner's checkout, which git otherwise refuses as "dubious ownership")."""
    return ["git", "-c", f"safe.directory={Path(root).resolve()}"]


def git_head(root: Path) -> str | None:
    """The checked-out commit, or None outside a git checkout."""
    try:
        out = subprocess.run(
            [*_git(root), "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=20
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    sha = out.stdout.strip() if out.returncode == 0 else ""
    from issue_assistant.settings import current

    settings = current()
    workspace = settings.workspace
    if not sha and workspace and Path(workspace).resolve() == Path(root).resolve():
        sha = settings.sha or ""  # the commit actions/checkout checked out
    return sha if re.fullmatch(r"[0-9a-f]{40}", sha) else None


def list_files(root: Path) -> list[str]:
    """Candidate paths (POSIX, relative to `root`): `git ls-files`, else a walk."""
    try:
        out = subprocess.run(
            [*_git(root), "ls-files", "-z"], cwd=root, capture_output=True, timeout=60, check=False
        )
        listed = out.returncode == 0 and (root / ".git").exists()
    except (OSError, subprocess.TimeoutExpired):
        listed = False
    if listed:
        paths = [p for p in out.stdout.decode("utf-8", "replace").split("\0") if p]
    else:
        paths = []
        deadline = time.monotonic() + WALK_SECONDS
        for here, dirs, names in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
            rel = Path(here).relative_to(root).as_posix()
            prefix = "" if rel == "." else rel + "/"
            paths += [prefix + n for n in names]
            if len(paths) >= WALK_MAX or time.monotonic() > deadline:
                log.warning(
                    "code: %s is not a git checkout and is large: only its first %d files are "
                    "looked at",
                    root,
                    len(paths),
                )
                break
    return sorted(p for p in paths if not skipped(p))


def read_text(root: Path, rel: str, max_bytes: int) -> str | None:
    """The file's text, or None when it is a symlink, outside `root`, too large or binary."""
    f = root / rel
    try:
        if f.is_symlink() or not f.is_file():
            return None
        if not f.resolve().is_relative_to(root.resolve()):
            return None
        if f.stat().st_size > max_bytes:
            return None
        data = f.read_bytes()
    except OSError:
        return None
    if b"\0" in data[:8192]:
        return None
    return data.decode("utf-8", "replace")


def origin_names(root: Path, full_name: str) -> bool:
    """Whether the checkout at `root` is a clone of `full_name` (its `origin` remote says so)."""
    try:
        out = subprocess.run(
            [*_git(root), "config", "--get", "remote.origin.url"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    url = out.stdout.strip().lower().removesuffix(".git")
    return out.returncode == 0 and url.endswith(full_name.lower())


def checkout_for(setting: str, full_name: str) -> Path | None:
    """The checkout `[code] checkout` names: "" none; "auto" the Action's workspace (else the
    current directory) when it is a clone of `full_name`; else that folder, which must exist."""
    from issue_assistant.errors import UserError
    from issue_assistant.settings import current

    if not setting:
        return None
    if setting == "auto":
        root = Path(current().workspace or Path.cwd())
        if (root / ".git").exists() and origin_names(root, full_name):
            return root
        return None
    root = Path(setting)
    if not root.is_dir():
        raise UserError("[code] checkout: no such folder", where=str(root))
    return root
