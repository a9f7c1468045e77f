"""Writing a file atomically: a temporary file beside it, renamed into place."""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

log = logging.getLogger(__name__)


def make_room(path: Path) -> None:
    """A path where the assistant keeps a file of its own (its cache): anything else there (a
    folder, a FIFO, a link) is removed, in one logged line, so the file can be written."""
    if path.is_symlink() or (path.exists() and not path.is_file()):
        log.warning("cache: %s is not a file; replaced", path)
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)


def write_atomic_with(path: Path, write: Callable[[BinaryIO], None], *, own: bool = False) -> Path:
    """Call `write` on a temporary file beside `path`, then rename it into place.

    A reader sees the old file or the new one, never half; a failing `write` leaves the old one.
    `own`: a file of the assistant's cache, written whatever is there (`make_room`).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    if own:
        make_room(path)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)
    return path


def write_atomic(path: Path, text: str, *, own: bool = False) -> Path:
    """Write `text` (UTF-8) to `path` atomically (`own`: see `write_atomic_with`)."""
    return write_atomic_with(path, lambda fh: fh.write(text.encode("utf-8")), own=own)
