"""Writing a file atomically: a temporary file beside it, renamed into place."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO


def write_atomic_with(path: Path, write: Callable[[BinaryIO], None]) -> Path:
    """Call `write` on a temporary file beside `path`, then rename it into place.

    A reader sees the old file or the new one, never half; a failing `write` leaves the old one.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
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


def write_atomic(path: Path, text: str) -> Path:
    """Write `text` (UTF-8) to `path` atomically."""
    return write_atomic_with(path, lambda fh: fh.write(text.encode("utf-8")))
