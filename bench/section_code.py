"""Benchmark: the code index (likely files): build time, size and query latency on real trees.

    python -c 'import bench.section_code as s; print(s.run())'

Trees: this repository's own checkout (git ls-files) and the Python standard library of the
running interpreter (a walk: no git), queried with the titles and bodies of hf-datasets issues.
"""

from __future__ import annotations

import platform
import statistics
import sys
import sysconfig
import time
from pathlib import Path

from bench.common import commit
from issue_assistant.likely.code import CodeIndex
from issue_assistant.likely.rank import likely_files
from issue_assistant.tracker.snapshot import read_snapshot

TITLE = "Code index and likely files"
ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "hf-datasets.jsonl.gz"


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def run(quick: bool = False) -> str:
    texts = [i.text for i in read_snapshot(DATA).all_issues() if not i.is_pull_request]
    texts = texts[: 50 if quick else 300]
    trees = [
        ("issue-assistant (git)", ROOT),
        ("Python stdlib (walk)", Path(sysconfig.get_paths()["stdlib"])),
    ]
    rows = []
    for name, root in trees:
        start = time.perf_counter()
        index = CodeIndex(root)
        build = time.perf_counter() - start
        lat = []
        for text in texts:
            t = time.perf_counter()
            likely_files(index, text, limit=5, project="datasets")
            lat.append(time.perf_counter() - t)
        rows.append(
            f"| {name} | {len(index)} | {build:.2f} s | {statistics.median(lat) * 1000:.1f} ms "
            f"| {_p(lat, 0.95) * 1000:.1f} ms |"
        )
    cpu = platform.processor() or platform.machine()
    return "\n".join(
        [
            f"Data: {len(texts)} hf-datasets issue texts as queries; commit {commit()}; "
            f"Python {sys.version.split()[0]} on {cpu}, {platform.system()}.",
            "",
            "| tree | files indexed | build (in memory) | likely files p50 | p95 |",
            "| --- | --- | --- | --- | --- |",
            *rows,
            "",
            "File-level accuracy is measured on real fixes of huggingface/datasets in the "
            "section below (`bench/likely_files.py`), the index of each moment read from git "
            "objects.",
        ]
    )


if __name__ == "__main__":
    print(run(quick="--quick" in sys.argv))
