"""The progress of a long run, one way for every command (`evaluate`, `index`, `snapshot`,
`calibrate`, `backlog`, and the index refresh of `analyze`): a rich bar on a terminal (taken
down at the end); off a terminal (a log, GitHub Actions, where CI is set) a plain line every ten
seconds, and a last line when any was said, so a run shorter than that stays quiet, as every
command is on success; nothing with `-q`.
Lines go to stderr, so `--json` on stdout stays clean.

The time remaining is measured on the items after the first: the first carries the run's
warm-up (a model loaded or fit while it waits), which made a 30 s run open at "remaining
~46:05"; so none is said until a second item is done.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import IO, Any, TypeVar

T = TypeVar("T")
#: seconds between two plain lines
EVERY = 10.0
_QUIET: ContextVar[bool] = ContextVar("issue_assistant_quiet", default=False)


@contextmanager
def quiet(on: bool = True) -> Iterator[None]:
    """No progress at all while this holds (`-q`)."""
    token = _QUIET.set(on)
    try:
        yield
    finally:
        _QUIET.reset(token)


def _now() -> float:
    return time.monotonic()


def clock(seconds: float) -> str:
    """`0:07`, `12:40`, `1:02:03`."""
    s = max(0, int(seconds + 0.5))
    h, m = divmod(s // 60, 60)
    return f"{h}:{m:02d}:{s % 60:02d}" if h else f"{m}:{s % 60:02d}"


def on_terminal(stream: IO[str]) -> bool:
    """A person watching: a terminal (a log, and GitHub Actions, are none)."""
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class Progress:
    """One run's progress over `total` items (None: not known yet, as while listing)."""

    def __init__(
        self,
        what: str,
        *,
        stream: IO[str] | None = None,
        terminal: bool | None = None,
        every: float | None = None,
        now: Callable[[], float] | None = None,
    ) -> None:
        self.what = what
        self.stream = stream or sys.stderr
        self.enabled = not _QUIET.get()
        self.terminal = on_terminal(self.stream) if terminal is None else terminal
        self.every = EVERY if every is None else every
        self.now = now or _now
        self.total: int | None = None
        self.done = self.new = 0
        self.note = ""
        self.t0 = self.first = self.said = 0.0
        self.spoke = False  # a plain line was said: the last one is said too
        self.started = False
        self._bar: Any = None
        self._task: Any = None

    # ---- the run -------------------------------------------------------------------------

    def start(self, total: int | None, done: int = 0) -> Progress:
        self.total, self.done, self.new = total, done, 0
        self.t0 = self.said = self.now()
        self.started = True
        if self.enabled and self.terminal:
            self._bar = _bar(self.what, self.stream)
            self._bar.start()
            self._task = self._bar.add_task(self.what, total=total, completed=done, note="")
        return self

    def advance(self, n: int = 1, note: str = "") -> None:
        self.done += n
        self.new += n
        if self.new == n:
            self.first = self.now()  # the end of the first item(s): its time is known
        self.note = note
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.update(self._task, advance=n, note=note)
        elif self.now() - self.said >= self.every:
            self.line(self.status())

    def report(self, done: int, total: int) -> None:
        """For a loop that reports its own count (`progress(done, total)`): started on the
        first call (the first item's time is unknown); stopped by the caller, as a loop on a
        time budget may end before `total`."""
        if not self.started:
            self.start(total, done - 1)
        self.advance(done - self.done)

    def stop(self) -> None:
        """The last line (off a terminal), or the bar taken down."""
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
        elif self.spoke and self.new:
            self.line(f"{self.what}: {self._count()} done in {clock(self.now() - self.t0)}")
        self.spoke, self.new = False, 0  # said once

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- words ---------------------------------------------------------------------------

    def line(self, text: str) -> None:
        """One line: above the bar on a terminal, else on its own (nothing when quiet)."""
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.console.print(text, highlight=False, markup=False, soft_wrap=True)
        else:
            print(text, file=self.stream, flush=True)
            self.spoke = True
        self.said = self.now()

    def describe(self, text: str) -> None:
        """What is being done now (a wait, say): on the bar, else in the next line."""
        self.note = text
        if self._bar is not None:
            self._bar.update(self._task, note=text)

    def remaining(self) -> float | None:
        """Seconds left at the rate of the items after the first (None before the second)."""
        if self.total is None or self.new < 2 or self.now() <= self.first:
            return None
        left = max(self.total - self.done, 0)
        return (self.now() - self.first) / (self.new - 1) * left

    def status(self) -> str:
        parts = [f"{self.what}: {self._count()}"]
        if self.note:
            parts.append(self.note)
        parts.append(f"elapsed {clock(self.now() - self.t0)}")
        left = self.remaining()
        if left is not None:
            parts.append(f"remaining ~{clock(left)}")
        return " ".join(parts)

    def _count(self) -> str:
        return f"{self.done}/{self.total}" if self.total is not None else str(self.done)


def _bar(what: str, stream: IO[str]) -> Any:
    """The rich bar (imported here: a command that shows none never loads rich's progress)."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    from rich.progress import Progress as Bar

    return Bar(
        TextColumn(what, markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("remaining"),
        TimeRemainingColumn(),
        TextColumn("{task.fields[note]}", markup=False),
        console=Console(file=stream, force_terminal=True),
        transient=True,
    )


@contextmanager
def working(what: str, doing: str = "still at it", *, every: float | None = None) -> Iterator[None]:
    """A step without items to count (a model fit): the bar's clock on a terminal, else a line
    every ten seconds while it lasts (`label model: still fitting, 0:20 so far`)."""
    progress = Progress(what, every=every)
    if not progress.enabled:
        yield
        return
    progress.start(None)
    done = threading.Event()

    def beat() -> None:
        while not done.wait(progress.every):
            progress.line(f"{what}: {doing}, {clock(progress.now() - progress.t0)} so far")

    thread = None
    if progress._bar is None:
        thread = threading.Thread(target=beat, name="progress-working", daemon=True)
        thread.start()
    try:
        yield
    finally:
        done.set()
        if thread is not None:
            thread.join()
        progress.spoke = False  # no count to end on: the step's own lines say what it did
        progress.stop()


def counted(items: Iterable[T], what: str, total: int | None = None) -> Iterator[T]:
    """`items`, with their progress shown as they are consumed."""
    with Progress(what).start(total) as progress:
        for item in items:
            yield item
            progress.advance()


def callback(what: str) -> Callable[[int, int], None]:
    """A `progress(done, total)` callback for a loop that reports its own count."""
    progress = Progress(what)

    def report(done: int, total: int) -> None:
        progress.report(done, total)
        if done >= total:
            progress.stop()

    return report
