"""One writer at a time per cache: a process lock (filelock) around index and state writes.

A second run waits up to `Settings.lock_wait` seconds (120; `ISSUE_ASSISTANT_LOCK_WAIT`), then
stops with `CacheBusy`, one line, exit 0. The lock is reentrant within a thread, so a run that
holds it can call code that takes it again.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from issue_assistant.errors import CacheBusy
from issue_assistant.settings import current

LOCK_NAME = ".issue-assistant.lock"


def lock_path(folder: str | Path) -> Path:
    """The lock file of a cache folder (beside it, so clearing the folder never removes it)."""
    folder = Path(folder)
    return folder.parent / f"{folder.name}{LOCK_NAME}"


@contextmanager
def holding(folder: str | Path, wait: float | None = None) -> Iterator[None]:
    """Hold `folder`'s lock for the block; `CacheBusy` when another process keeps it longer
    than `wait` seconds."""
    path = lock_path(folder)
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(path, is_singleton=True)  # reentrant per thread; threads wait as processes
    seconds = current().lock_wait if wait is None else wait
    try:
        lock.acquire(timeout=seconds)
    except Timeout:
        raise CacheBusy(
            f"another run holds the cache {Path(folder)} (waited {seconds:g} s)"
        ) from None
    try:
        yield
    finally:
        lock.release()
