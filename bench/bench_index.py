"""Benchmark: build the tantivy index of the shared hf-datasets snapshot and time searches.

    python bench/bench_index.py [--queries 500] [--repeat 3]

Prints the snapshot read time, index build time (fresh directory, best and median of --repeat
runs), the no-op incremental update, and search latency p50/p95 for `similar_to` with an as-of
filter (the query every analysis makes) and for free-text `search`.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from issue_assistant.index import IssueIndex
from issue_assistant.tracker.asof import AsOfView
from issue_assistant.tracker.snapshot import read_snapshot

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--snapshot", default=str(DATA / "hf-datasets.jsonl.gz"))
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    start = time.perf_counter()
    snapshot = read_snapshot(args.snapshot)
    read_s = time.perf_counter() - start
    issues = list(snapshot.all_issues())

    builds = []
    for _ in range(args.repeat):
        directory = tempfile.mkdtemp()
        start = time.perf_counter()
        index = IssueIndex(directory)
        index.update(issues)
        builds.append(time.perf_counter() - start)
    start = time.perf_counter()
    reopened = IssueIndex(directory)
    reopened.update(issues)
    noop_s = time.perf_counter() - start

    targets = [i for i in issues if not i.is_pull_request][-args.queries :]
    similar_ms, text_ms = [], []
    for issue in targets:
        view = AsOfView.for_issue(snapshot, issue.number)
        start = time.perf_counter()
        reopened.similar_to(view.target(), as_of=view.moment, limit=15)
        similar_ms.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        reopened.search(issue.title, as_of=view.moment, limit=10)
        text_ms.append((time.perf_counter() - start) * 1000)

    print(f"snapshot: {snapshot.repository.full_name}, {len(issues)} issues and pull requests")
    print(f"read snapshot: {read_s:.2f} s")
    print(f"index build: best {min(builds):.2f} s, median {statistics.median(builds):.2f} s")
    print(f"incremental update with nothing changed: {noop_s:.2f} s")
    print(
        f"similar_to (as-of, top 15) over {len(similar_ms)} issues: "
        f"p50 {percentile(similar_ms, 0.5):.2f} ms, p95 {percentile(similar_ms, 0.95):.2f} ms"
    )
    print(
        f"search (title words, as-of, top 10): "
        f"p50 {percentile(text_ms, 0.5):.2f} ms, p95 {percentile(text_ms, 0.95):.2f} ms"
    )


if __name__ == "__main__":
    main()
