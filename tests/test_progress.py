"""The one progress display (issue 26): plain lines every ten seconds off a terminal (logs,
Actions), a sane time remaining from the first item, quiet runs that are short or `-q`, a bar on
a terminal; and through the CLI, on a real snapshot, for evaluate and index."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from issue_assistant import progress as progress_module
from issue_assistant.cli import main
from issue_assistant.progress import Progress, callback, clock, quiet

HERE = Path(__file__).resolve().parent
HF = HERE.parents[1] / "shared" / "data" / "hf-datasets.jsonl.gz"
LABELS = HERE / "data" / "evaluate" / "hf.labels.toml"


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def plain(clock_: Clock, what: str = "evaluate") -> tuple[Progress, io.StringIO]:
    out = io.StringIO()
    return Progress(what, stream=out, terminal=False, now=clock_), out


def steps(p: Progress, t: Clock, total: int | None, items: int, note: bool = False) -> None:
    """A run of `items` items, one a second, from start to stop."""
    p.start(total)
    for n in range(items):
        t.t += 1.0
        p.advance(note=f"#{n}" if note else "")
    p.stop()


def test_off_a_terminal_a_line_every_ten_seconds_and_a_last_one():
    t = Clock()
    p, out = plain(t)
    steps(p, t, 30, 30, note=True)
    lines = out.getvalue().splitlines()
    assert lines == [
        "evaluate: 10/30 #9 elapsed 0:10 remaining ~0:20",
        "evaluate: 20/30 #19 elapsed 0:20 remaining ~0:10",
        "evaluate: 30/30 #29 elapsed 0:30 remaining ~0:00",
        "evaluate: 30/30 done in 0:30",
    ]


def test_the_time_remaining_is_sane_from_the_start():
    """A first item slowed by a cold start (a model fit), then 0.6 s each: the estimate follows
    the items after the first, not the whole run's average, and never opens at "~46:05"."""
    t = Clock()
    p, _ = plain(t)
    p.start(50)
    t.t += 30.0
    p.advance()
    assert p.remaining() is None and "remaining" not in p.status()  # the warm-up: no estimate
    for _ in range(9):
        t.t += 0.6
        p.advance()
    assert p.remaining() == pytest.approx(0.6 * 40)
    assert "remaining ~0:24" in p.status()


def test_a_short_run_says_nothing_and_quiet_says_nothing_at_all():
    t = Clock()
    p, out = plain(t)
    steps(p, t, 5, 5)
    assert out.getvalue() == ""  # under ten seconds: quiet, as on success
    with quiet():
        p, out = plain(t)
        p.line("listing")
        steps(p, t, 100, 100)
    assert out.getvalue() == ""


def test_a_count_without_a_total_and_a_callback_loop(monkeypatch):
    t = Clock()
    p, out = plain(t, "listed")
    steps(p, t, None, 25)
    assert out.getvalue().splitlines() == [
        "listed: 10 elapsed 0:10",
        "listed: 20 elapsed 0:20",
        "listed: 25 done in 0:25",
    ]
    # a loop that reports (done, total) itself: the first item's time is unknown
    monkeypatch.setattr(progress_module, "EVERY", 0.0)
    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    report = callback("embeddings")
    for done in range(1, 4):
        report(done, 3)
    lines = err.getvalue().splitlines()
    assert lines[0].startswith("embeddings: 1/3 elapsed") and "remaining" not in lines[0]
    assert lines[1].startswith("embeddings: 2/3 elapsed") and "remaining ~" in lines[1]
    assert lines[-1].startswith("embeddings: 3/3 done in")


def test_on_a_terminal_a_bar_taken_down_at_the_end():
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    out = Tty()
    p = Progress("evaluate", stream=out, terminal=True)
    p.start(3)
    p.advance(note="#7 cost $0.25")
    p.line("a line above the bar")
    p.advance(2)
    p.stop()
    text = out.getvalue()
    assert "a line above the bar" in text and "evaluate" in text and "\x1b[" in text


def test_clock():
    assert [clock(s) for s in (0, 7.4, 760, 3723)] == ["0:00", "0:07", "12:40", "1:02:03"]


def _evaluate(tmp_path, *extra: str) -> list[str]:
    argv = ["evaluate", "--snapshot", str(HF), "--labels", str(LABELS), "-L", "4"]
    argv += ["--cache-dir", str(tmp_path / "cache"), "--report", str(tmp_path / "r.md"), *extra]
    assert main(argv) == 0
    return []


def test_evaluate_shows_progress_off_a_terminal(tmp_path, monkeypatch, capsys, reused_fits):
    """Through the CLI, stderr not a terminal (as in Actions): with the interval at 0 every item
    is a line; -q silences them; stdout keeps only the result. The second run reuses the
    first one's fits (tests/reused_fits.py): its question is the quiet flag, not the fits."""
    monkeypatch.setattr(progress_module, "EVERY", 0.0)
    monkeypatch.setenv("CI", "true")
    monkeypatch.chdir(tmp_path)
    _evaluate(tmp_path)
    out, err = capsys.readouterr()
    lines = [ln for ln in err.splitlines() if ln.startswith("evaluate: ")]
    assert len(lines) == 5, err
    assert re.match(r"evaluate: 1/4 #\d+ cost \$0\.00 elapsed 0:\d\d$", lines[0])
    assert re.match(r"evaluate: 2/4 #\d+ cost \$0\.00 elapsed 0:\d\d remaining ~0:\d\d$", lines[1])
    assert re.match(r"evaluate: 4/4 done in 0:\d\d$", lines[-1])
    assert out.strip() == str(tmp_path / "r.md")
    _evaluate(tmp_path, "-q", "--no-resume", "--force")
    assert "evaluate: " not in capsys.readouterr().err


def test_index_shows_progress_off_a_terminal(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(progress_module, "EVERY", 0.0)
    monkeypatch.setenv("CI", "true")
    monkeypatch.chdir(tmp_path)
    poetry = HERE.parents[1] / "shared" / "data" / "poetry-sample.jsonl.gz"
    argv = ["index", "--snapshot", str(poetry), "--cache-dir", str(tmp_path / "c"), "--json"]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    lines = [ln for ln in err.splitlines() if ln.startswith("index: ")]
    assert re.match(r"index: 1/(\d+) elapsed 0:\d\d$", lines[0])
    total = re.match(r"index: 1/(\d+)", lines[0])[1]
    assert re.match(rf"index: {total}/{total} done in \d+:\d\d$", lines[-1])
    assert out.startswith("{")  # stdout keeps the JSON alone


def test_the_live_index_refresh_shows_progress_off_a_terminal(tmp_path, monkeypatch, capsys):
    """The index refresh of analyze, backlog and the Action's index (`sync.refresh_index`),
    against the fake GitHub with the real client: a line per listed issue with the interval at 0,
    then the last one; nothing under -q."""
    from datetime import UTC, datetime

    from issue_assistant.sync import refresh_index
    from tests.fakegithub import FakeGitHub
    from tests.fakegithub.fixtures import TOKEN, make_tracker

    monkeypatch.setattr(progress_module, "EVERY", 0.0)
    monkeypatch.setenv("CI", "true")
    now = datetime.now(UTC)
    with FakeGitHub("octo/repo", token=TOKEN) as gh:
        for n in range(5):
            gh.add_issue(f"Issue {n}", "It breaks.")
        index = refresh_index(make_tracker(gh), tmp_path / "cache", now)
        out, err = capsys.readouterr()
        lines = [ln for ln in err.splitlines() if ln.startswith("index: ")]
        assert [re.sub(r"\d+:\d\d", "T", ln) for ln in lines] == [
            *(f"index: {n} listed elapsed T" for n in range(1, 6)),
            "index: 5 done in T",
        ]
        assert len(index) == 5 and out == ""
        with quiet():
            refresh_index(make_tracker(gh), tmp_path / "other", now)
        assert "index: " not in capsys.readouterr().err


def test_a_loop_that_reports_its_own_count_and_stops_early():
    """`Progress.report`, as the embeddings of a refresh use it: started on the first count,
    and a loop cut short by its time budget still ends on its last line."""
    t = Clock()
    out = io.StringIO()
    p = Progress("embeddings", stream=out, terminal=False, every=0.0, now=t)
    with p:
        for done in (1, 2):
            t.t += 1.0
            p.report(done, 5)
    lines = out.getvalue().splitlines()
    assert lines[0] == "embeddings: 1/5 elapsed 0:00"  # the first item's time is unknown
    assert lines[1] == "embeddings: 2/5 elapsed 0:01 remaining ~0:03"
    assert lines[-1] == "embeddings: 2/5 done in 0:01"
