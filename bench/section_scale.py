"""Benchmark: speed at scale, and the Action's requests per live issue.

    python -c 'import bench.section_scale as s; print(s.run())'

The larger repositories are made by renumbering copies of the shared hf-datasets snapshot
(7,258 records): copy k adds k x 10,000 to every number (and to duplicate_of) and k x 3 years to
every time, so they are labelled as such. For each size: the cold index build (`issue-assistant
index`), a warm `issue-assistant analyze` end to end (a new process, the index warm and the
snapshot unchanged), in-process candidate search, peak memory and the index size. Embeddings
are off here (BM25 only). The request count is measured against the fake GitHub of the tests.
"""

from __future__ import annotations

import gzip
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

from bench.common import commit

TITLE = "Speed at scale"
ROOT = Path(__file__).resolve().parents[1]
HF = ROOT.parent / "shared" / "data" / "hf-datasets.jsonl.gz"
CACHE = ROOT / ".cache" / "bench-scale"
SIZES = (1, 4, 14)  # copies: about 7k, 29k and 102k records
SHIFT = timedelta(days=3 * 365)


def _shift(value: str | None, k: int) -> str | None:
    if value is None:
        return None
    t = datetime.fromisoformat(value.replace("Z", "+00:00")) + k * SHIFT
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def make_copies(copies: int) -> Path:
    """A snapshot of `copies` renumbered copies of hf-datasets (written once, then reused)."""
    out = CACHE / f"hf-x{copies}.jsonl.gz"
    if out.is_file():
        return out
    CACHE.mkdir(parents=True, exist_ok=True)
    with gzip.open(HF, "rt", encoding="utf-8") as fh:
        head = json.loads(fh.readline())
        records = [json.loads(line) for line in fh if line.strip()]
    head["full_name"] = f"bench/hf-x{copies}"
    tmp = out.with_suffix(".tmp")
    with gzip.open(tmp, "wt", encoding="utf-8", compresslevel=1) as fh:
        fh.write(json.dumps(head) + "\n")
        for k in range(copies):
            for r in records:
                c = dict(r, number=r["number"] + k * 10_000)
                for key in ("created_at", "closed_at", "updated_at"):
                    if key in c:
                        c[key] = _shift(c[key], k)
                if c.get("duplicate_of"):
                    c["duplicate_of"] += k * 10_000
                fh.write(json.dumps(c, ensure_ascii=False) + "\n")
    os.replace(tmp, out)
    return out


def _cli(*args: str) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds and peak RSS (KB) of one `issue-assistant` process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "issue_assistant", *args],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return wall, cpu, after.ru_maxrss


def _size_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 1e6


def _search_ms(snapshot: Path, cache: Path, issues: list[int]) -> tuple[float, float]:
    from issue_assistant.config import Config
    from issue_assistant.index import IssueIndex
    from issue_assistant.index.retrieval import Retriever
    from issue_assistant.pipeline import index_path
    from issue_assistant.tracker.snapshot import read_repository

    repo = read_repository(snapshot)
    index = IssueIndex(index_path(cache, repo.full_name))
    r = Retriever(index)
    times, cpus = [], []
    for n in issues:
        issue = index.stored(n)
        if issue is None:
            continue
        start, cpu = time.perf_counter(), time.process_time()
        r.candidates(issue, issue.created_at + timedelta(minutes=1), Config().duplicates.candidates)
        times.append((time.perf_counter() - start) * 1000)
        cpus.append((time.process_time() - cpu) * 1000)
    return statistics.median(times), statistics.median(cpus)


def live_requests() -> tuple[int, list[str]]:
    """Requests of a warm live `analyze` (a new process's tracker) against the fake GitHub."""
    sys.path.insert(0, str(ROOT))
    import tempfile

    from issue_assistant.config import Config, IndexConfig, load_labels
    from issue_assistant.decision import Decision
    from issue_assistant.engines.fake import FakeEngine
    from issue_assistant.live import analyze_live
    from tests.fakegithub import FakeGitHub
    from tests.fakegithub.fixtures import make_tracker

    labels = load_labels(ROOT / "labels.toml")
    t0 = datetime(2024, 1, 1).astimezone()
    with tempfile.TemporaryDirectory() as tmp, FakeGitHub("octo/repo", token="test-token") as gh:
        for i in range(1, 301):
            gh.add_issue(
                f"Loading problem {i}",
                f"fails with code {i}",
                f"u{i}",
                created_at=t0 + timedelta(hours=i),
            )
        config = Config(index=IndexConfig(cache_dir=tmp))

        def run(number: int) -> None:
            FakeEngine.enqueue(Decision(type="bug"))
            analyze_live(
                "octo/repo",
                number,
                labels=labels,
                config=config,
                engine_name="similar",
                writes="live",
                tracker=make_tracker(gh),
                now=t0 + timedelta(days=30),
            )

        run(300)
        new = gh.add_issue("Loading problem again", "fails with code 7", "newbie")
        gh.clear_requests()
        run(new)
        sent = [f"{r.method} {r.path}" for r in gh.requests]
    return len(sent), sent


def run(quick: bool = False) -> str:
    start_load = os.getloadavg()[0]
    sizes = SIZES[:2] if quick else SIZES
    rows = []
    for copies in sizes:
        snap = make_copies(copies)
        cache = CACHE / f"cache-x{copies}"
        if cache.exists():
            import shutil

            shutil.rmtree(cache)
        build, build_cpu, build_kb = _cli(
            "index", "--snapshot", str(snap), "--cache-dir", str(cache)
        )
        last = 7016 + (copies - 1) * 10_000
        warm, warm_cpu = [], []
        peak = 0
        for _ in range(3):
            wall, cpu, kb = _cli(
                "analyze", "--snapshot", str(snap), "--issue", str(last), "--labels",
                "bench/hf-datasets.labels.toml", "--cache-dir", str(cache),
            )  # fmt: skip
            warm.append(wall)
            warm_cpu.append(cpu)
            peak = max(peak, kb)
        numbers = [7000 + (copies - 1) * 10_000 + i for i in range(0, 400, 4)]
        search, search_cpu = _search_ms(snap, cache, numbers)
        records = copies * 7258
        rows.append(
            f"| {records:,} ({copies} cop{'y' if copies == 1 else 'ies'}) | {build:.1f} s "
            f"/ {build_cpu:.1f} s | {statistics.median(warm):.2f} s / "
            f"{statistics.median(warm_cpu):.2f} s | {search:.1f} ms / {search_cpu:.1f} ms | "
            f"{peak / 1024:.0f} MB | {_size_mb(cache):.0f} MB |"
        )
    count, sent = live_requests()
    load = f"{start_load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end"
    lines = [
        f"Measured {time.strftime('%Y-%m-%d')} at commit `{commit()}`. Data: renumbered copies of "
        f"`hf-datasets` (copy k: numbers + k x 10,000, times + k x 3 years); embeddings off. "
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}.",
        "",
        f"Times are wall / CPU (user + system). Load average {load} (on "
        f"{os.cpu_count()} cores): over 1 the wall times include waiting for other jobs, so the "
        "CPU time is what the work itself costs.",
        "",
        "| records | index build, cold | `analyze` end to end, warm (new process), median of 3 "
        "| candidate search in process, p50 | peak memory (largest process) | index on disk |",
        "| --- | --- | --- | --- | --- | --- |",
        *rows,
        "",
        f"A warm live `analyze` (after the first run) against the fake GitHub: **{count} requests**"
        f" ({', '.join(sent)}).",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(run())
