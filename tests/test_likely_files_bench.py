"""The likely-files benchmark (bench/likely_files.py) end to end on a tiny git repository: ground
truth, replay at each moment, the tables, and the calibration it writes
(read back by the product)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from bench import likely_files as bench
from bench import likely_files_report as report
from issue_assistant.evaluate.fixes import build_fixes, read_fixes
from issue_assistant.evaluate.likely_replay import Row, Table, fit_weights, halves, replay
from issue_assistant.likely.rank import Weights, load_calibration
from issue_assistant.likely.signals import Hint
from issue_assistant.tracker.snapshot import write_snapshot
from tests import tinygit


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    return tinygit.build(tmp_path_factory.mktemp("tiny") / "tiny")


def test_replay_sees_each_issue_at_its_moment(repo) -> None:  # noqa: ANN001
    root, shas = repo
    snap = tinygit.snapshot()
    fixes = build_fixes(snap, root)
    rows, builds = replay(snap, fixes, str(root), project="tiny")
    assert [(r.issue, r.commit) for r in rows] == [(10, shas["docs"]), (12, shas["fix10"])]
    assert [b[0] for b in builds] == [shas["docs"], shas["fix10"]]
    by = {r.issue: r for r in rows}
    assert [h.path for h in by[10].hints["frame"]] == ["src/tiny/core.py"]
    assert by[10].hints["error"][0].path == "src/tiny/core.py"  # "No entry named … in the store"
    assert by[10].truth["source"] == ["src/tiny/core.py"]
    assert by[10].truth["functions"] == ["src/tiny/core.py::Store.get"]
    assert by[10].functions[("src/tiny/core.py", 11)] == "Store.get"
    # #12 comes after #10's fix was merged: that fix is history it may learn from
    assert "src/tiny/core.py" in [h.path for h in by[12].hints["prior"]]
    parent_rows, _ = replay(snap, fixes, str(root), at="parent", project="tiny")
    assert [r.commit for r in parent_rows] == [shas["docs"], shas["fix10"]]


def test_tables_score_signals_alone_and_combined(repo) -> None:  # noqa: ANN001
    root, _ = repo
    snap = tinygit.snapshot()
    rows, _ = replay(snap, build_fixes(snap, root), str(root), project="tiny")
    source = Table(rows)
    frame = source.signal_alone("frame")
    assert (str(frame.at1), frame.issues) == ("0.50 (1/2)", 2)  # #12 has no traceback
    combined = source.scores(Weights())
    assert str(combined.at1) == "1.00 (2/2)" and combined.mrr == 1.0
    assert str(source.function_scores(Weights()).at1) == "1.00 (2/2)"  # Store.get, cache_dir
    older, newer = halves(rows)
    assert [rows[i].issue for i in older] == [10] and [rows[i].issue for i in newer] == [12]
    fitted = fit_weights(source, older)
    assert source.scores(fitted, older).at1.num == 1


def test_the_one_command_writes_truth_tables_and_calibration(tmp_path: Path, repo) -> None:  # noqa: ANN001
    root, _ = repo
    snap = tinygit.snapshot()
    snapshot = tmp_path / "tiny.jsonl.gz"
    write_snapshot(snapshot, snap.repository, list(snap.all_issues()))
    doc = tmp_path / "benchmarks.md"
    doc.write_text(
        "# Benchmarks\n\n<!-- section:likely-files -->\nSTALE\n<!-- /section:likely-files -->\n"
    )
    truth, cal = tmp_path / "tiny.fixes.jsonl", tmp_path / "likely_files.toml"
    argv = ["--clone", str(root), "--snapshot", str(snapshot), "--doc", str(doc)]
    argv += ["--truth", str(truth), "--calibration", str(cal), "--cache", str(tmp_path / "c")]
    assert bench.main(argv) == 0
    assert [f.issue for f in read_fixes(truth)] == [10, 12]
    assert all(json.loads(line)["moment"] for line in truth.read_text().splitlines())
    text = doc.read_text()
    assert "STALE" not in text
    assert "| stack frames (innermost first) (`frame`) | 0.50 (1/2) |" in text
    assert "**combined**, fitted weights, newer half (held out)" in text
    measured = load_calibration(cal)
    assert measured.source.startswith("tiny.jsonl.gz, 2 fixes")
    assert measured.kinds == ("source",)
    # --reuse scores the kept replay again (same tables, no replay)
    assert bench.main([*argv, "--reuse"]) == 0
    assert doc.read_text().count("<!-- section:likely-files -->") == 1


def _row(n: int, words: list[str], history: list[str]) -> Row:
    hints = {
        "words": [Hint(p, 10.0 - i) for i, p in enumerate(words)],
        "history": [Hint(p, 10.0 - i) for i, p in enumerate(history)],
    }
    paths = {h.path for hs in hints.values() for h in hs}
    truth = {"source": ["src/right.py"], "all": ["src/right.py"], "functions": []}
    return Row(
        issue=n,
        opened=datetime(2024, 1, 1) + timedelta(days=n),
        commit="c",
        hints=hints,
        kinds=dict.fromkeys(paths, "source"),
        truth=truth,
        present=["src/right.py"],
        latency=0.0,
        files=len(paths),
    )


def test_of_weightings_ranking_as_well_the_one_whose_shown_files_are_right_wins() -> None:
    # words put the fixed file first in 12 of 20 issues, history in 6; both have it in the five
    rows = []
    for n in range(20):
        other = [f"src/o{n}_{k}.py" for k in range(3)]
        words = ["src/right.py", *other] if n < 12 else [*other[:2], "src/right.py"]
        history = ["src/right.py", *other] if n < 6 else [*other, "src/right.py"]
        rows.append(_row(n, words, history))
    table = Table(rows)
    everyone = list(range(len(rows)))
    by_words = Weights(frame=0, path=0, error=0, words=1, history=0, prior=0)
    by_history = Weights(frame=0, path=0, error=0, words=0, history=1, prior=0)
    assert table.scores(by_words).at5.share == table.scores(by_history).at5.share == 1.0
    seen = {by_history: (1.0, 0.9), by_words: (1.0, 0.8)}  # history first by (at5, MRR)
    chosen = report.choose(table, seen, everyone)
    assert chosen.weights == by_words
    assert chosen.precision["first-close"] == 0.6  # 12 of 20 first files right, no clear lead
    assert report.showable(table, chosen, everyone) == 12
    history_cal = report.calibrate(table, by_history, everyone)
    assert report.showable(table, history_cal, everyone) == 0  # 6 of 20 first: never shown
    # a weighting well short of the best accuracy@5 does not compete, however precise its first
    seen = {by_history: (1.0, 0.9), by_words: (1.0 - 2 * report.AT5_SLACK, 0.8)}
    assert report.choose(table, seen, everyone).weights == by_history
