"""File-level accuracy of the likely files in the report, on the synthetic tinyparse data."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from issue_assistant.config.labels import LabelsConfig
from issue_assistant.config.sections import Config
from issue_assistant.evaluate.files import file_measures, fixed_files
from issue_assistant.evaluate.report import render_report
from issue_assistant.evaluate.results import IssueResult, RunHeader
from issue_assistant.evaluate.runner import Evaluator
from issue_assistant.index.local import open_index
from tests import contextdata as data
from tests.contextdata import tinyparse_checkout  # noqa: F401 (the checkout fixture)
from tests.test_context_repo import LABELS


def evaluate(tmp_path: Path, checkout: Path | None, labels: LabelsConfig = LABELS):
    snap = data.snapshot()
    config = Config.model_validate({"code": {"checkout": str(checkout) if checkout else ""}})
    ev = Evaluator(snap, index=open_index(snap, tmp_path / "c"), labels=labels, config=config)
    results = [ev.one(snap.get_issue(n), i) for i, n in enumerate((1, 3, 5))]
    header = RunHeader(
        repository="octo/tinyparse",
        engine="similar",
        day=date(2025, 3, 1),
        requested=3,
        selected=3,
    )
    return results, render_report(header, results)


def test_results_carry_likely_and_fixed_files(tmp_path: Path, checkout: Path) -> None:
    results, _ = evaluate(tmp_path, checkout)
    by = {r.number: r for r in results}
    assert by[1].fixed_files == ["src/tinyparse/parser.py"]
    assert by[1].likely_files[0] == "src/tinyparse/parser.py"  # the stack frame
    assert by[3].fixed_files == ["src/tinyparse/cache.py", "docs/cache.md"]
    assert by[5].fixed_files is None
    assert by[1].path_areas == ["area: parser"] and by[3].path_areas == ["area: cache"]
    back = IssueResult.model_validate_json(by[3].model_dump_json())
    assert back.likely_files == by[3].likely_files


def test_report_has_file_accuracy_at_1_and_5(tmp_path: Path, checkout: Path) -> None:
    results, report = evaluate(tmp_path, checkout)
    m = file_measures(results)
    assert (m.at1.num, m.at1.den, m.at5.num, m.at5.den) == (2, 2, 2, 2)
    row = "| Likely files, against the fix's source files (tests and docs left out) |"
    assert f"{row} 1.00 (2/2) | 1.00 (2/2) | 1.00 (2/2) | 1.000 |" in report


def test_a_miss_counts_against_accuracy() -> None:
    def result(n: int, likely: list[str], fixed: list[str] | None) -> IssueResult:
        return IssueResult.model_validate(
            {
                "number": n,
                "created_at": "2025-01-01T00:00:00Z",
                "decision": {},
                "gold": {},
                "likely_files": likely,
                "fixed_files": fixed,
            }
        )

    rows = [
        result(1, ["a.py", "b.py"], ["b.py"]),  # @5 only
        result(2, ["c.py"], ["c.py"]),  # @1
        result(3, ["x.py"] * 1, ["y.py"]),  # miss
        result(4, [], ["z.py"]),  # no likely files: not scored
        result(5, ["a.py"], None),  # no fix known: not scored
    ]
    m = file_measures(rows)
    assert str(m.at1) == "0.33 (1/3)" and str(m.at5) == "0.67 (2/3)"
    assert m.fixed == 4 and m.indexed == 3


def test_without_a_checkout_the_report_says_why(tmp_path: Path) -> None:
    results, report = evaluate(tmp_path, None)
    assert all(not r.likely_files for r in results)
    assert "no checkout was indexed" in report and "| Likely files, against" not in report


def test_without_fixing_prs_not_measured() -> None:
    snap = data.snapshot()
    assert fixed_files(snap.get_issue(5)) is None
    assert not file_measures([]).scored
