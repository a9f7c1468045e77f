"""evaluate with the LLM path (the `fake-llm` engine): strategy, duplicate verification with and
without, failures by class and cost per issue in the report."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from issue_assistant.commands import evaluate as command
from issue_assistant.engines.failures import EngineFailure
from issue_assistant.engines.fake import FakeLLM
from issue_assistant.evaluate.results import read_results
from tests.evaluating import bare_checkout, evaluate_cache  # noqa: F401 (fixtures)

HERE = Path(__file__).resolve().parent
HF = HERE.parents[1] / "shared" / "data" / "hf-datasets.jsonl.gz"
LABELS = HERE / "data" / "evaluate" / "hf.labels.toml"
N = 6
# Every run here is over one snapshot: its label models and duplicate replays are fit once.
pytestmark = pytest.mark.usefixtures("reused_fits")


def evaluate(cache: Path, checkout: Path, name: str, *argv: str) -> tuple[str, dict]:
    parser = argparse.ArgumentParser()
    command.add_arguments(parser)
    report = checkout.parent / f"{name}.md"
    base = ["--snapshot", str(HF), "--labels", str(LABELS), "--cache-dir", str(cache)]
    engine = [] if "--engine" in argv else ["--engine", "fake-llm"]
    args = [*base, *engine, "--issues", str(N), "--report", str(report), *argv]
    assert command.run(parser.parse_args(args)) == 0
    _, results, _ = read_results(report.with_suffix(".jsonl"))
    return report.read_text(), results


def duplicate_of_first(context) -> dict:
    first = context.candidates[0].issue.number
    return {
        "type": None,
        "areas": [],
        "topics": [],
        "priority": None,
        "duplicate": {"number": first, "reason": "same words", "confidence": 0.9},
        "questions": [],
        "summary": "",
    }


def test_duplicate_verification_measured_with_and_without(cache, checkout, tmp_path):
    FakeLLM.replies.extend([duplicate_of_first, {"same": False, "reason": "no"}] * N)
    with_check, results = evaluate(cache, checkout, "with")
    assert all(r.decision.duplicate is None for r in results.values())
    assert sum(r.decision.usage.verify_calls for r in results.values()) == N
    assert f"| Re-asks / retries / duplicate checks | 0 / 0 / {N} |" in with_check
    assert "| Strategy | `rag` |" in with_check

    off = tmp_path / "config.toml"
    off.write_text("[engines.fake-llm]\nverify_duplicates = false\n")
    FakeLLM.replies.extend([duplicate_of_first] * N)
    without, results = evaluate(cache, checkout, "without", "--config", str(off))
    proposed = [r for r in results.values() if r.decision.duplicate is not None]
    assert len(proposed) == N and "| Re-asks / retries / duplicate checks | 0 / 0 / 0 |" in without


def test_report_counts_failure_classes_and_strategy(cache, checkout):
    answer = {"type": None, "areas": [], "topics": [], "priority": None, "duplicate": None}
    FakeLLM.replies.extend(
        [
            EngineFailure("odd", "unknown"),
            "not json",
            "still not json",
            *[json.dumps({**answer, "questions": [], "summary": "ok"})] * (N - 2),
        ]
    )
    text, results = evaluate(cache, checkout, "zero", "--strategy", "zero-shot")
    assert "| Strategy | `zero-shot` |" in text
    assert "| Failures by class | 1 schema, 1 unknown |" in text
    classes = sorted(r.decision.usage.failure or "-" for r in results.values())
    assert classes == ["-"] * (N - 2) + ["schema", "unknown"]
    assert "| Dollars per issue (mean / most) | $0.0000 / $0.0000 |" in text
