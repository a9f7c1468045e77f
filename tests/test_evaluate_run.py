"""Offline `evaluate` runs on the hf-datasets snapshot: fake and similar engines, resume, merge."""

from __future__ import annotations

import argparse
import json
from datetime import timedelta
from pathlib import Path

import pytest

from issue_assistant.commands import evaluate as command
from issue_assistant.context import Context
from issue_assistant.decision import Decision, Duplicate, Usage
from issue_assistant.engines.fake import FakeEngine
from issue_assistant.errors import UserError
from issue_assistant.evaluate.results import read_results
from tests.evaluating import bare_checkout, evaluate_cache  # noqa: F401 (fixtures)

HERE = Path(__file__).resolve().parent
HF = Path(__file__).resolve().parents[2] / "shared" / "data" / "hf-datasets.jsonl.gz"
LABELS = HERE / "data" / "evaluate" / "hf.labels.toml"
N = 12
# Every run here is over one snapshot: its label models and duplicate replays are fit once.
pytestmark = pytest.mark.usefixtures("reused_fits")


def evaluate(cache: Path, *argv: str) -> int:
    parser = argparse.ArgumentParser()
    command.add_arguments(parser)
    base = ["--snapshot", str(HF), "--labels", str(LABELS), "--cache-dir", str(cache)]
    args = list(argv) if argv and argv[0] == "merge" else [*base, *argv]
    return command.run(parser.parse_args(args))


def answer(context: Context) -> Decision:
    """A deterministic fake decision, from the context alone (so thread order does not matter)."""
    issue = context.issue
    text = issue.text.lower()
    first = context.candidates[0].issue.number if context.candidates else None
    return Decision(
        type="bug" if "error" in text else "enhancement",
        areas=["streaming"] if "stream" in text else [],
        questions=["Which version?"] if "error" in text else [],
        duplicate=Duplicate(number=first) if first and issue.number % 4 == 0 else None,
        usage=Usage(
            # Never 0: a zero latency is replaced by the measured wall time, which varies.
            latency_s=0.01 * (issue.number % 7 + 1),
            tokens_in=100,
            tokens_out=10,
            cost_usd=0.001,
            tool_calls=1,
            turns=1,
        ),
    )


def enqueue(n: int = 3 * N) -> None:
    FakeEngine.enqueue(*([answer] * n))


def test_fake_engine_sees_each_issue_as_it_was(cache, checkout, capsys):
    enqueue()
    assert evaluate(cache, "--engine", "fake", "--issues", str(N)) == 0  # the old name works
    report = checkout / "huggingface-datasets-accuracy.md"  # the current folder
    out, err = capsys.readouterr()
    assert out.strip() == str(report)
    assert f"--issues {N} is deprecated: use --limit {N}" in err
    text = report.read_text()
    for part in (
        "| Engine | `fake` |",
        "| Issues evaluated | 12 |",
        "xychart-beta",
        "## What the numbers can't tell",
        "**No events.**",
        "Tokens in / out | 1200 / 120",
        "$0.0120",
    ):
        assert part in text
    header, results, _ = read_results(report.with_suffix(".jsonl"))
    assert header.selected == N and len(results) == N
    assert len(FakeEngine.history) == N
    for ctx in FakeEngine.history:
        original = results[ctx.issue.number]
        assert ctx.as_of == original.created_at + timedelta(minutes=1)
        assert ctx.issue.labels == []  # no events: every label is a later one, none shown
        assert ctx.issue.state == "open" and ctx.issue.closed_at is None
        for cand in ctx.candidates:
            assert cand.issue.number != ctx.issue.number
            assert cand.issue.created_at <= ctx.as_of
    numbers = [r.number for r in sorted(results.values(), key=lambda r: -r.position)]
    assert numbers == sorted(numbers)  # newest first by position


def test_similar_engine_offline(cache, checkout):
    out = checkout.parent / "similar.md"
    assert evaluate(cache, "--engine", "similar", "--issues", "20", "--report", str(out)) == 0
    text = out.read_text()
    assert "| Engine | `similar` |" in text and "| Issues evaluated | 20 |" in text
    assert "| Candidates | BM25 and the word vectors shipped with the package |" in text
    _, results, _ = read_results(out.with_suffix(".jsonl"))
    assert len(results) == 20 and not any(r.error for r in results.values())
    assert sum(1 for r in results.values() if r.decision.type) >= 10
    assert all(r.decision.candidates for r in results.values())


def test_resume_after_an_interrupt_gives_the_same_report(cache, checkout):
    full = checkout.parent / "full.md"
    enqueue()
    assert evaluate(cache, "--engine", "fake", "--issues", str(N), "--report", str(full)) == 0
    FakeEngine.reset()

    def interrupt(context: Context) -> Decision:
        raise KeyboardInterrupt

    part = checkout.parent / "part.md"
    FakeEngine.enqueue(*([answer] * 4), interrupt)
    assert evaluate(cache, "--engine", "fake", "--issues", str(N), "--report", str(part)) == 130
    jsonl = part.with_suffix(".jsonl")
    assert len(jsonl.read_text().splitlines()) == 1 + 4
    assert "| Issues evaluated | 4 of 12 selected (**incomplete**" in part.read_text()
    with open(jsonl, "a") as fh:  # a write torn by the interruption
        fh.write('{"kind": "issue", "number": 12')
    FakeEngine.reset()
    enqueue()
    args = ("--engine", "fake", "--issues", str(N), "--report", str(part), "--resume")
    assert evaluate(cache, *args) == 0
    assert len(FakeEngine.history) == N - 4
    assert part.read_text() == full.read_text()
    assert all(json.loads(line) for line in jsonl.read_text().splitlines())

    # resuming a finished run only re-renders the report
    FakeEngine.reset()
    assert evaluate(cache, *args) == 0 and FakeEngine.history == []
    assert part.read_text() == full.read_text()


def test_shards_merge_into_the_same_report(cache, checkout):
    full = checkout.parent / "full.md"
    enqueue()
    assert evaluate(cache, "--engine", "fake", "--issues", str(N), "--report", str(full)) == 0
    shards = []
    for i in (1, 2, 3):
        enqueue()
        out = checkout.parent / f"shard{i}.md"
        jobs = "2" if i == 2 else "1"
        assert (
            evaluate(
                cache,
                "--engine",
                "fake",
                "--issues",
                str(N),
                "--shard",
                f"{i}/3",
                "--jobs",
                jobs,
                "--report",
                str(out),
            )
            == 0
        )
        assert "| Shard | " + f"{i}/3 only" in out.read_text()
        shards.append(str(out.with_suffix(".jsonl")))
    merged = checkout.parent / "merged.md"
    assert evaluate(cache, "merge", *shards, "--report", str(merged)) == 0
    assert merged.read_text() == full.read_text()
    # the default name, in the current folder (not a checkout of huggingface/datasets)
    assert evaluate(cache, "merge", *shards[:2]) == 0
    partial = checkout / "huggingface-datasets-accuracy-shard-1,2-of-3.md"
    assert "| Shard | 1,2/3 only" in partial.read_text()


def test_the_report_goes_to_the_current_folder_but_never_into_the_engines_checkout(
    cache, checkout, caplog
):
    """Issue 17 item 6: the report is written where the command runs (it went to `../`),
    except inside the checkout the engine reads, where it would find the answers."""
    enqueue()
    assert evaluate(cache, "--engine", "fake", "--limit", "2") == 0
    assert (checkout / "huggingface-datasets-accuracy.md").is_file()
    assert (checkout / "huggingface-datasets-accuracy.jsonl").is_file()
    engine_reads = ("--checkout", str(checkout))
    with pytest.raises(UserError, match="outside the checkout"):
        evaluate(cache, "--engine", "fake", "--limit", "2", "--report", "r.md", *engine_reads)
    enqueue()
    caplog.set_level("WARNING")
    assert evaluate(cache, "--engine", "fake", "--limit", "2", *engine_reads) == 0
    assert (checkout.parent / "huggingface-datasets-accuracy.md").is_file()
    assert any("the checkout the engine reads" in r.getMessage() for r in caplog.records)
    with pytest.raises(UserError, match="merge"):
        evaluate(cache, "mergе-typo", "x.jsonl")
    with pytest.raises(UserError, match="--limit"):
        evaluate(cache, "--engine", "fake", "--limit", "500")


def test_an_interrupted_run_resumes_by_default_as_snapshot_does(cache, checkout):
    def interrupt(context: Context) -> Decision:
        raise KeyboardInterrupt

    report = checkout.parent / "r.md"
    FakeEngine.enqueue(*([answer] * 3), interrupt)
    assert evaluate(cache, "--engine", "fake", "--limit", str(N), "--report", str(report)) == 130
    FakeEngine.reset()
    enqueue()
    assert evaluate(cache, "--engine", "fake", "--limit", str(N), "--report", str(report)) == 0
    assert len(FakeEngine.history) == N - 3  # no --resume needed
    # a finished run is not resumed: the next run starts over, on its report with --force only
    FakeEngine.reset()
    enqueue()
    with pytest.raises(UserError, match="the report exists: --force overwrites it"):
        evaluate(cache, "--engine", "fake", "--limit", str(N), "--report", str(report))
    argv = ("--engine", "fake", "--limit", str(N), "--report", str(report), "--force")
    assert evaluate(cache, *argv) == 0
    assert len(FakeEngine.history) == N
    # --no-resume starts over an interrupted one
    FakeEngine.reset()
    FakeEngine.enqueue(answer, interrupt)
    assert evaluate(cache, *argv) == 130
    FakeEngine.reset()
    enqueue()
    argv = ("--engine", "fake", "--limit", str(N), "--report", str(report), "--no-resume")
    assert evaluate(cache, *argv) == 0
    assert len(FakeEngine.history) == N


def test_merge_refuses_other_runs(cache, checkout):
    a, b = checkout.parent / "a.md", checkout.parent / "b.md"
    enqueue()
    assert evaluate(cache, "--engine", "fake", "--issues", "2", "--report", str(a)) == 0
    assert evaluate(cache, "--engine", "similar", "--issues", "2", "--report", str(b)) == 0
    with pytest.raises(UserError, match="not the same run"):
        evaluate(cache, "merge", str(a.with_suffix(".jsonl")), str(b.with_suffix(".jsonl")))
    with pytest.raises(UserError, match="another run"):
        evaluate(cache, "--engine", "similar", "--issues", "3", "--report", str(a), "--resume")
