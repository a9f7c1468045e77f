"""`evaluate` with a clone's history (tests/tinygit.py): each issue's code as it was when it was
opened, the fixes the merge commits show as the truth, and the engines' own files measured."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from issue_assistant.commands.evaluate import _clone
from issue_assistant.config.labels import LabelsConfig
from issue_assistant.config.sections import Config
from issue_assistant.engines.fake import FakeEngine, FakeLLM
from issue_assistant.evaluate.clone import CloneHistory, has_history
from issue_assistant.evaluate.files import file_measures
from issue_assistant.evaluate.report import render_report
from issue_assistant.evaluate.results import RunHeader
from issue_assistant.evaluate.runner import Evaluator
from issue_assistant.index.local import open_index
from issue_assistant.tracker.snapshot import Snapshot
from tests import tinygit

LABELS = LabelsConfig.model_validate({"type": [{"name": "bug"}]})


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tinygit.build(tmp_path_factory.mktemp("tiny") / "tiny")[0]


def labelled() -> Snapshot:
    snap = tinygit.snapshot()
    issues = [
        i.model_copy(update={"labels": ["bug"]}) if not i.is_pull_request else i
        for i in snap.all_issues()
    ]
    return Snapshot(snap.repository, issues)


def evaluate(tmp_path: Path, repo: Path, engine: str = "similar"):
    snap = labelled()
    config = Config.model_validate({"code": {"checkout": str(repo)}})
    clone = CloneHistory(repo, snap, max_file_kb=256, max_files=1000)
    ev = Evaluator(
        snap,
        index=open_index(snap, tmp_path / "c"),
        labels=LABELS,
        config=config,
        engine_name=engine,
        clone=clone,
    )
    results = [ev.one(snap.get_issue(n), i) for i, n in enumerate((10, 12))]
    header = RunHeader(
        repository="octo/tiny", engine=engine, day=date(2024, 2, 1), requested=2, selected=2
    )
    return results, render_report(header, results)


def test_truth_and_code_come_from_the_clone_at_each_moment(tmp_path: Path, repo: Path) -> None:
    results, report = evaluate(tmp_path, repo)
    by = {r.number: r for r in results}
    assert by[10].fixed_files == ["src/tiny/core.py", "tests/test_core.py"]
    assert by[10].fixed_functions == [
        "src/tiny/core.py::Store.get",
        "tests/test_core.py::test_load",
    ]
    assert by[10].likely_files[0] == "src/tiny/core.py"  # the stack frame
    assert by[10].likely_functions[0] == "src/tiny/core.py::Store.get"  # the frame's `get`
    assert by[12].likely_files[0] == "src/tiny/cache.py"
    # the code as it was: a module added after both issues is never proposed
    assert not any("src/tiny/new.py" in r.likely_files for r in results)
    m = file_measures(results)
    assert str(m.source.at1) == "1.00 (2/2)" and m.source.mrr == 1.0
    row = "| Likely files, against the fix's source files (tests and docs left out) |"
    assert f"{row} 1.00 (2/2) | 1.00 (2/2) | 1.00 (2/2) | 1.000 |" in report


def test_the_engines_own_files_are_measured(tmp_path: Path, repo: Path) -> None:
    answer = {
        "type": "bug",
        "areas": [],
        "topics": [],
        "priority": None,
        "duplicate": None,
        "questions": [],
        "summary": "",
    }
    FakeEngine.reset()
    FakeLLM.replies.extend(
        [
            {**answer, "files": ["tiny/core.py", "made/up.py"]},  # a suffix names a real file
            {**answer, "files": ["src/tiny/core.py"]},  # wrong for #12
        ]
    )
    results, report = evaluate(tmp_path, repo, "fake-llm")
    assert [r.decision.files for r in results] == [["src/tiny/core.py"], ["src/tiny/core.py"]]
    m = file_measures(results)
    assert m.engine_proposed == 2 and str(m.engine.at1) == "0.50 (1/2)"
    assert "| The engine's own files (2 issues where it proposed any), against source files |" in (
        report
    )


def test_evaluate_uses_the_clone_only_with_its_history(tmp_path: Path, repo: Path) -> None:
    assert has_history(repo) and not has_history(tmp_path)
    snap = labelled()
    with_clone = Config.model_validate({"code": {"checkout": str(repo)}})
    clone = _clone(with_clone, snap)
    assert clone is not None and sorted(clone.fixes) == [10, 12]
    plain = tmp_path / "plain"
    plain.mkdir()
    assert _clone(Config.model_validate({"code": {"checkout": str(plain)}}), snap) is None
    off = Config.model_validate({"code": {"checkout": str(repo), "likely_files": 0}})
    assert _clone(off, snap) is None
