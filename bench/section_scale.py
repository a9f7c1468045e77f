"""Benchmark: speed at scale, and the Action's requests per live issue.

    python bench/run.py --only scale      (python -c 'import bench.section_scale as s; s.run()')

The larger repositories are renumbered copies of the shared hf-datasets snapshot (7,258
records): copy k adds k x 10,000 to every number (and to duplicate_of) and k x 3 years to every
time, the fetch time included. Per size, each a new process (wall, CPU and peak memory of that
process, and the machine's load average when it ran): the cold index build, the first
`analyze` (it fits the label model), a warm `analyze`, a snapshot update with ten new issues,
`calibrate`, `evaluate` of 200 issues, and a warm live `analyze` against the fake GitHub of the
tests (the index and model in place, one new issue), also at about 200k. Candidate search is
timed in process. Sentence embeddings are off; the shipped word vectors find candidates beside
BM25, as by default; the dense search is timed apart on synthetic
vectors.
"""

from __future__ import annotations

import gzip
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import NamedTuple

from bench.common import commit

TITLE = "Speed at scale"
ROOT = Path(__file__).resolve().parents[1]
HF = ROOT.parent / "shared" / "data" / "hf-datasets.jsonl.gz"
LABELS = ROOT / "bench" / "hf-datasets.labels.toml"
CACHE = ROOT / ".cache" / "bench-scale"
SIZES = (1, 4, 14)  # copies: about 7k, 29k and 102k records
LIVE_SIZES = (*SIZES, 28)  # and about 203k for the warm live run
SHIFT = timedelta(days=3 * 365)
EVALUATE = 200


def _shift(value: str | None, k: int) -> str | None:
    if value is None:
        return None
    t = datetime.fromisoformat(value.replace("Z", "+00:00")) + k * SHIFT
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _copy(record: dict, k: int) -> dict:
    c = dict(record, number=record["number"] + k * 10_000)
    for key in ("created_at", "closed_at", "updated_at"):
        if key in c:
            c[key] = _shift(c[key], k)
    if c.get("duplicate_of"):
        c["duplicate_of"] += k * 10_000
    return c


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
    head["fetched_at"] = _shift(head["fetched_at"], copies - 1)
    tmp = out.with_suffix(".tmp")
    with gzip.open(tmp, "wt", encoding="utf-8", compresslevel=1) as fh:
        fh.write(json.dumps(head) + "\n")
        for k in range(copies):
            for r in records:
                fh.write(json.dumps(_copy(r, k), ensure_ascii=False) + "\n")
    os.replace(tmp, out)
    return out


def make_update(copies: int, new: int = 10) -> Path:
    """The same snapshot with `new` issues more (the lines before are the same bytes)."""
    src = make_copies(copies)
    out = CACHE / f"hf-x{copies}-plus{new}.jsonl.gz"
    if out.is_file():
        return out
    with gzip.open(src, "rb") as fh:
        lines = fh.readlines()
    issues = [json.loads(x) for x in lines[1:] if b'"kind": "issue"' in x]
    top = max(i["number"] for i in issues)
    last = max(i["created_at"] for i in issues)
    added = []
    for n in range(new):
        r = dict(issues[-1 - n], number=top + 1 + n, created_at=last, updated_at=last)
        r.pop("duplicate_of", None)
        added.append((json.dumps(r, ensure_ascii=False) + "\n").encode())
    with gzip.open(out, "wb", compresslevel=1) as fh:
        fh.writelines(lines + added)
    return out


class Run(NamedTuple):
    """One process: wall and CPU seconds, peak memory, the load average before and after."""

    wall: float
    cpu: float
    peak_mb: float
    load: tuple[float, float]

    def cell(self) -> str:
        return f"{self.wall:.1f} s / {self.cpu:.1f} s / {self.peak_mb:.0f} MB"

    def load_text(self) -> str:
        return f"{self.load[0]:.1f}-{self.load[1]:.1f}"


TIME = Path("/usr/bin/time")  # GNU time: reports its child's own peak memory


def _cli(*args: str, env: dict[str, str] | None = None) -> Run:
    """One `issue-assistant` process: wall, its own CPU (user + system) and peak RSS.

    Started through GNU time where there is one: a child forked straight from this process
    would report this process's memory as its own peak (Linux keeps the high-water mark across
    exec), and this one holds a 100k-issue index by then. Run in a directory outside the
    project (no config.toml or labels.toml there), so only the files named count."""
    work = Path(tempfile.gettempdir()) / "issue-assistant-bench-scale"
    work.mkdir(parents=True, exist_ok=True)
    load = os.getloadavg()[0]
    report = work / "time.txt"
    command = [sys.executable, "-m", "issue_assistant", *args]
    if TIME.is_file():
        command = [str(TIME), "-o", str(report), "-f", "%U %S %M", *command]
    start = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            command,
            cwd=work,
            stdout=subprocess.DEVNULL,
            stderr=err,
            env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
        )
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        if status != 0:
            err.seek(0)
            raise RuntimeError(f"{' '.join(args)} failed:\n{err.read().decode()[-3000:]}")
    cpu, peak_kb = usage.ru_utime + usage.ru_stime, float(usage.ru_maxrss)
    if TIME.is_file():
        user, system, peak = report.read_text().split()[-3:]
        cpu, peak_kb = float(user) + float(system), float(peak)
    return Run(wall, cpu, peak_kb / 1024, (load, os.getloadavg()[0]))


def _median(runs: list[Run]) -> Run:
    mid = sorted(runs, key=lambda r: r.cpu)[len(runs) // 2]
    return Run(
        statistics.median(r.wall for r in runs),
        mid.cpu,
        max(r.peak_mb for r in runs),
        (min(r.load[0] for r in runs), max(r.load[1] for r in runs)),
    )


def _size_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 1e6


def _search_ms(cache: Path, full_name: str, issues: list[int]) -> float:
    """Candidate search in process, p50 of CPU milliseconds."""
    from issue_assistant.config.sections import Config
    from issue_assistant.index import IssueIndex
    from issue_assistant.index.local import index_path
    from issue_assistant.index.retrieval import Retriever

    index = IssueIndex(index_path(cache, full_name))
    r = Retriever(index)
    limit = Config().duplicates.candidates
    cpus = []
    for n in issues:
        issue = index.stored(n)
        if issue is None:
            continue
        start = time.process_time()
        r.candidates(issue, issue.created_at + timedelta(minutes=1), limit)
        cpus.append((time.process_time() - start) * 1000)
    return statistics.median(cpus)


def search_only(sizes: tuple[int, ...] = SIZES, repeats: int = 3) -> str:
    """Candidate search alone (the cold index built, then `repeats` p50s): a few minutes
    instead of the section's hour, for a change to retrieval.

        python -c 'import bench.section_scale as s; print(s.search_only())'
    """
    out = [
        f"Candidate search alone, measured {time.strftime('%Y-%m-%d')} at commit `{commit()}` "
        f"({os.cpu_count()} cores; p50 CPU ms over 100 issues, {repeats} passes; the load "
        "average when each pass ran):",
        "",
        "| records | cold `index` (wall / CPU / peak) | candidate search, p50 CPU |",
        "| --- | --- | --- |",
    ]
    for copies in sizes:
        snap = make_copies(copies)
        cache = _fresh(CACHE / f"search-x{copies}")
        build = _cli("index", "--snapshot", str(snap), "--cache-dir", str(cache))
        numbers = [7000 + (copies - 1) * 10_000 + i for i in range(0, 400, 4)]
        passes = []
        for _ in range(repeats):
            ms = _search_ms(cache, f"bench/hf-x{copies}", numbers)
            passes.append(f"{ms:.1f} ms (load {os.getloadavg()[0]:.1f})")
        records = {"records": copies * 7258, "copies": copies}
        out.append(f"| {_records(records)} | {build.cell()} | {', '.join(passes)} |")
    return "\n".join(out) + "\n"


def _common(snap: Path, cache: Path) -> list[str]:
    return ["--snapshot", str(snap), "--labels", str(LABELS), "--cache-dir", str(cache)]


def _live(copies: int, cache: Path, runs: int = 3) -> Run:
    """A warm live `analyze` (dry run) of one new issue, the index and label model in place."""
    sys.path.insert(0, str(ROOT))
    from issue_assistant.index.local import index_path
    from issue_assistant.tracker.snapshot import read_repository
    from tests.fakegithub import FakeGitHub

    snap = make_copies(copies)
    repo = read_repository(snap)
    path = index_path(cache, repo.full_name)
    number = 10_000 * copies + 1
    when = repo.fetched_at + timedelta(days=1)
    (path / "synced_at").write_text((when - timedelta(hours=1)).isoformat())
    (path / "listing-cursor").unlink(missing_ok=True)
    out = []
    with FakeGitHub(repo.full_name, token="bench-token") as gh:
        gh.add_issue(
            "load_dataset fails with a FileNotFoundError on a streaming parquet split",
            "Calling load_dataset(..., streaming=True) raises FileNotFoundError for the split.",
            "newcomer",
            number=number,
            created_at=when,
            updated_at=when,
        )
        env = {"GITHUB_TOKEN": "bench-token", "GITHUB_API_URL": gh.base_url}
        target = f"{repo.full_name}#{number}"
        for _ in range(runs):
            args = ["analyze", target, "--engine", "similar", "--labels", str(LABELS)]
            out.append(_cli(*args, "--cache-dir", str(cache), env=env))
    return _median(out)


def live_requests() -> tuple[int, list[str]]:
    """Requests of a warm live `analyze` (a new process's tracker) against the fake GitHub."""
    sys.path.insert(0, str(ROOT))

    from issue_assistant.config.labels import load_labels
    from issue_assistant.config.sections import Config, IndexConfig
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
                engine_name="fake",  # the queued decision, so a comment is posted
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


def dense_ms(rows: int = 100_000, dim: int = 384) -> float:
    """The dense search's CPU milliseconds (p50) over `rows` synthetic unit vectors."""
    import numpy as np

    from issue_assistant.index.vectors import VectorStore

    folder = CACHE / "dense"
    shutil.rmtree(folder, ignore_errors=True)
    rng = np.random.default_rng(0)
    vecs = rng.standard_normal((rows, dim)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    store = VectorStore(folder, "bench", dim)
    # issue numbers start at 1 (a store with a number that is not positive is rebuilt empty)
    store._append([(i + 1, (i + 1) * 60, i + 1) for i in range(rows)], list(vecs))
    store = VectorStore(folder, "bench", dim)
    if len(store) != rows:
        raise RuntimeError(f"bench scale: the dense store holds {len(store)} of {rows} vectors")
    cpus = []
    for i in range(30):
        start = time.process_time()
        found = store.nearest(vecs[i], before=datetime.now().astimezone(), exclude=i + 1, limit=50)
        if len(found) != 50:
            raise RuntimeError(f"bench scale: the dense search found {len(found)} of 50")
        cpus.append((time.process_time() - start) * 1000)
    shutil.rmtree(folder, ignore_errors=True)
    return statistics.median(cpus)


def _fresh(cache: Path) -> Path:
    shutil.rmtree(cache, ignore_errors=True)
    return cache


def measure(copies: int) -> dict:
    """Every per-size figure, in the order a repository meets them."""
    snap = make_copies(copies)
    cache = _fresh(CACHE / f"cache-x{copies}")
    common = _common(snap, cache)
    last = str(7016 + (copies - 1) * 10_000)
    row: dict = {"records": copies * 7258, "copies": copies}
    row["build"] = _cli("index", "--snapshot", str(snap), "--cache-dir", str(cache))
    row["first"] = _cli("analyze", *common, "--issue", last)
    row["warm"] = _median([_cli("analyze", *common, "--issue", last) for _ in range(3)])
    numbers = [7000 + (copies - 1) * 10_000 + i for i in range(0, 400, 4)]
    row["search"] = _search_ms(cache, f"bench/hf-x{copies}", numbers)
    row["disk"] = _size_mb(cache)
    row["update"] = _cli("index", "--snapshot", str(make_update(copies)), "--cache-dir", str(cache))
    row["calibrate"] = _cli("calibrate", *common)
    row["live"] = _live(copies, cache)
    # a folder of its own each run: a report left by an earlier run is refused, and the log
    # beside it would make the run resume instead of starting from nothing
    with tempfile.TemporaryDirectory(prefix="issue-assistant-bench-reports-") as reports:
        row["evaluate"] = _cli(
            "evaluate", *common, "--limit", str(EVALUATE), "--engine", "similar",
            "--report", str(Path(reports) / f"x{copies}.md"),
        )  # fmt: skip
    return row


def measure_live_only(copies: int) -> dict:
    """The largest size: `index --labels` (the build and the fit) and the warm live run."""
    snap = make_copies(copies)
    cache = _fresh(CACHE / f"cache-x{copies}")
    row: dict = {"records": copies * 7258, "copies": copies}
    row["index_labels"] = _cli("index", *_common(snap, cache))
    row["live"] = _live(copies, cache)
    row["disk"] = _size_mb(cache)
    return row


def _records(row: dict) -> str:
    k = row["copies"]
    return f"{row['records']:,} ({k} cop{'y' if k == 1 else 'ies'})"


def goals(rows: list[dict], big: list[dict], requests: int) -> list[str]:
    """The goals of issues 7 and 21 that these figures decide, each with its verdict."""
    largest = rows[-1]
    size = f"{largest['records']:,}"

    def verdict(ok: bool) -> str:
        if largest["records"] < 100_000:
            return "not decided (the largest size measured is below 100k)"
        return "met" if ok else "**missed**"

    warm, search, evaluate = largest["warm"], largest["search"], largest["evaluate"]
    lives = [r["live"] for r in [*rows, *big]]
    first, last = lives[0], lives[-1]
    flat = last.cpu <= 3 * first.cpu  # the same order of magnitude from the smallest size
    sizes = f"{rows[0]['records']:,} to {[*rows, *big][-1]['records']:,}"
    return [
        "| goal | measured | |",
        "| --- | --- | --- |",
        f"| warm `analyze` end to end <= 1 s at 100k issues | {warm.wall:.2f} s wall, "
        f"{warm.cpu:.2f} s CPU at {size} | {verdict(warm.cpu <= 1.0)} (by CPU time) |",
        f"| candidate search <= 10 ms p50 in process at 100k | {search:.1f} ms at {size} "
        f"| {verdict(search <= 10.0)} |",
        f"| warm live `analyze`: CPU flat from 7k to 200k | {first.cpu:.2f} s to {last.cpu:.2f} s"
        f" CPU ({sizes}) | {verdict(flat)} (within 3x) |",
        f"| <= 10 requests per warm live issue | {requests} | {verdict(requests <= 10)} |",
        f"| `evaluate` of {EVALUATE} issues <= 60 s at 100k on two cores (issue 21, item 4) | "
        f"{evaluate.wall:.0f} s wall, {evaluate.cpu:.0f} s CPU at {size} "
        f"| {verdict(evaluate.wall <= 60.0)} |",
    ]


def byte_compile() -> None:
    """Byte-compile the package first, as the image is (`Dockerfile`): under
    PYTHONDONTWRITEBYTECODE (set on some machines, this one included) every process would
    otherwise compile the package's changed modules from source, about 0.2 s each start."""
    import compileall

    compileall.compile_dir(ROOT / "issue_assistant", quiet=1)


def run(quick: bool = False) -> str:
    byte_compile()
    start_load = os.getloadavg()[0]
    sizes = SIZES[:2] if quick else SIZES
    rows = [measure(k) for k in sizes]
    big = [] if quick else [measure_live_only(k) for k in LIVE_SIZES if k not in sizes]
    count, sent = live_requests()
    dense = dense_ms(20_000 if quick else 100_000)
    end_load = os.getloadavg()[0]

    def line(name: str, key: str, note: str = "") -> str:
        cells = " | ".join(f"{r[key].cell()} (load {r[key].load_text()})" for r in rows)
        return f"| {name}{note} | {cells} |"

    header = " | ".join(_records(r) for r in rows)
    table = [
        f"| wall / CPU / peak memory (load average) | {header} |",
        "| --- |" + " --- |" * len(rows),
        line("`index`, cold (no label model)", "build"),
        line("first `analyze` (fits the label model)", "first"),
        line("`analyze`, warm (median of 3 by CPU)", "warm"),
        line("`index` after 10 new issues (the snapshot file changed)", "update"),
        line("`calibrate` (label model refit, thresholds, duplicates)", "calibrate"),
        line(f"`evaluate`, {EVALUATE} issues, `similar`", "evaluate"),
        line("live `analyze`, warm (fake GitHub, dry run, median of 3)", "live"),
        "| candidate search in process, p50 CPU | "
        + " | ".join(f"{r['search']:.1f} ms" for r in rows)
        + " |",
        "| index and models on disk | " + " | ".join(f"{r['disk']:.0f} MB" for r in rows) + " |",
    ]
    live_rows = [
        f"| {_records(r)} | {r['live'].cell()} (load {r['live'].load_text()}) |"
        for r in [*rows, *big]
    ]
    lines = [
        f"Measured {time.strftime('%Y-%m-%d')} at commit `{commit()}`. Data: renumbered copies "
        "of `hf-datasets` (copy k: numbers + k x 10,000, times + k x 3 years); labels "
        f"`bench/hf-datasets.labels.toml`; the default word vectors, sentence embeddings off. "
        f"{platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}. Rerun: "
        "`python bench/run.py --only scale` (about 13 minutes on 2 quiet cores).",
        "",
        "Each cell is one new process: wall time / CPU time (user + system) / its peak memory, "
        f"and the machine's 1-minute load average before and after it (on {os.cpu_count()} "
        f"cores; {start_load:.1f} when the section started, {end_load:.1f} when it ended). "
        "Other engineers' jobs share the machine: above a load of 1 per core the wall times "
        "include waiting for them, so the CPU time is what the work itself costs.",
        "",
        *table,
        "",
        "The goals these figures decide:",
        "",
        *goals(rows, big, count),
        "",
        "A warm live `analyze` as the size grows (the index built by `index --labels`, which "
        "also fits the label model; one new issue listed, its comment not posted):",
        "",
        "| records | live `analyze`, warm: wall / CPU / peak memory |",
        "| --- | --- |",
        *live_rows,
        *(
            f"\n`index --labels` at {_records(r)}: {r['index_labels'].cell()} "
            f"(load {r['index_labels'].load_text()})."
            for r in big
        ),
        "",
        f"Dense search (`VectorStore.nearest`, a full scan) over "
        f"{20_000 if quick else 100_000:,} synthetic unit vectors of 384 floats: "
        f"{dense:.1f} ms p50 CPU.",
        "",
        f"A warm live `analyze` (after the first run) against the fake GitHub: **{count} requests**"
        f" ({', '.join(sent)}).",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(run())
