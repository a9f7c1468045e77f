"""`evaluate` with the `similar` engine on the shared huggingface/datasets snapshot, end to end as
a user runs it (a fresh process, the index built from nothing), with its measures and cost.

The one source of these figures: docs/benchmarks.md shows this section's output and
docs/evaluate.md links to it. Rerun: `python bench/run.py --only evaluate`.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import commit, reference_loop

TITLE = "`evaluate` with the `similar` engine (`bench/section_evaluate.py`)"
ROOT = Path(__file__).resolve().parents[1]
SNAPSHOT = "../shared/data/hf-datasets.jsonl.gz"
LABELS = "bench/hf-datasets.labels.toml"
# The child's peak memory: only a process's own children count, so the run gets a parent of its own.
MEASURED = (
    "import resource, subprocess, sys; done = subprocess.run(sys.argv[1:]); "
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); "
    "sys.exit(done.returncode)"
)


def share(part: dict[str, int]) -> str:
    num, den = part["num"], part["den"]
    return f"{num / den:.2f} ({num}/{den})" if den else f"– ({num}/{den})"


def _evaluate(issues: int) -> tuple[dict, float, float, int]:
    """The `--json` summary, wall and CPU seconds and peak memory (kB) of one evaluate run."""
    with tempfile.TemporaryDirectory() as tmp:
        work, out = Path(tmp) / "work", Path(tmp) / "out"
        work.mkdir()
        out.mkdir()
        argv = [sys.executable, "-m", "issue_assistant", "evaluate"]
        argv += ["--snapshot", str((ROOT / SNAPSHOT).resolve()), "--labels", str(ROOT / LABELS)]
        argv += ["--limit", str(issues), "--engine", "similar", "--json"]
        argv += ["--report", str(out / "report.md")]
        env = {**os.environ, "CI": "1", "XDG_CACHE_HOME": str(Path(tmp) / "cache")}
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(":")
        before = os.times()
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", MEASURED, *argv],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
        )
        wall = time.perf_counter() - start
        after = os.times()
    if done.returncode != 0:
        raise RuntimeError(f"evaluate failed ({done.returncode}): {done.stderr[-2000:]}")
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    peak = int(done.stderr.strip().splitlines()[-1])
    return json.loads(done.stdout), wall, cpu, peak


def run(quick: bool = False) -> str:
    issues = 20 if quick else 200
    before = reference_loop()
    summary, wall, cpu, peak = _evaluate(issues)
    # the machine's speed before and after the run: the smaller is the one it ran nearer to
    reference = min(before, reference_loop())
    head, m = summary["header"], summary["measures"]
    groups = {g["group"]: g for g in m["groups"]}
    cost = m["cost"]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    rows = [
        ("type accuracy", share(m["type_accuracy"])),
        *(
            (f"{name} precision / recall", f"{share(g['precision'])} / {share(g['recall'])}")
            for name, g in groups.items()
            if g["issues"] or g["precision"]["den"]
        ),
        ("duplicate recall / precision", f"{share(m['dup_recall'])} / {share(m['dup_precision'])}"),
        ("false-duplicate rate", share(m["false_dup_rate"])),
        ("retrieval ceiling (true original among the candidates)", share(m["retrieval_ceiling"])),
    ]
    asked = m["question_precision"]["den"] + m["question_recall"]["den"]
    rows.append(
        ("questions", "not measurable: the snapshot has no comments")
        if not asked
        else (
            "questions precision / recall",
            f"{share(m['question_precision'])} / {share(m['question_recall'])}",
        )
    )
    command = (
        f"issue-assistant evaluate --snapshot {SNAPSHOT} --labels {LABELS} "
        f"--limit {issues} --engine similar"
    )
    lines = [
        "<!-- doc-test: slow (about 3 minutes) -->",
        "```sh",
        command,
        "```",
        "",
        f"Commit `{commit()}`, {time.strftime('%Y-%m-%d')}; {platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}, load {load:.1f} when "
        "measured (the machine is shared: a high load makes the times larger)."
        + (" **A --quick run: not the published figures.**" if quick else ""),
        "",
        f"{m['issues']} issues (of {head['qualified']} that qualify among the {head['examined']} "
        f"newest closed issues): **{wall:.0f} s wall**, {cpu:.0f} s CPU, from nothing (the index "
        f"built and the label models fit per time bucket), **{cpu / reference:.1f} times the "
        f"reference loop** measured in the same run ({reference:.2f} s CPU: "
        "`bench/common.reference_loop`, a fixed pure-Python word count, the best of 3 before "
        f"and after; the goal is 15 times); peak memory {peak // 1024} MB; engine "
        f"latency p50 {cost['latency_p50'] * 1000:.0f} ms, p95 {cost['latency_p95'] * 1000:.0f} ms "
        f"per issue; {cost['failures']} engine failures.",
        "",
        "| measure | value |",
        "| --- | --- |",
        *(f"| {name} | {value} |" for name, value in rows),
        "",
        "The snapshot has no label events, so every current label counts as given by a maintainer "
        "after opening (the report says so).",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    print(run(quick="--quick" in sys.argv))
