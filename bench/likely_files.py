"""Benchmark: likely files on real fixes, from a snapshot and a local clone (the one command).

    python bench/likely_files.py --clone PATH [--snapshot FILE] [--at moment|parent|both]
                             [--quick] [--reuse] [--calibration FILE] [--doc FILE]

1. Ground truth: the snapshot's pull requests that close an issue ("Fixes #N" or its URL) joined
   with the clone's merge commits (`… (#PR)`), written to `bench/<snapshot>.fixes.jsonl`
   (`evaluate.fixes`): issue, fixing PRs and commits, parent, moment, changed files by kind.
2. Replay: each issue at its moment (the last commit before it was opened; `--at parent`: the
   fix's parent), the code read from git objects (`likely.code_git`: no checkout on disk, a fresh
   index per moment, each file version analysed once), every signal computed and kept in
   `.cache/bench/likely-files-*.pkl` (`--reuse` scores a kept replay again).
3. Scores (`bench/likely_files_report.py`): file accuracy @1/@5/@10 and MRR per signal alone and
   combined (weights fitted on the older half, scored on the newer half and on all), with and
   without tests, function-level, the precision the comment's list is shown at, and the speed;
   the table goes into docs/benchmarks.md between `<!-- section:likely-files -->` markers and the
   fitted weights and precision into `--calibration` (default: the shipped
   `issue_assistant/likely/likely_files.toml`).
Nothing is downloaded: the clone is the user's (`fetch`, or `git clone` of the repository).
"""

from __future__ import annotations

import argparse
import os
import pickle
import platform
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import commit  # noqa: E402
from bench.likely_files_report import (  # noqa: E402
    fit_calibration,
    main_run,
    report,
    write_calibration,
)
from issue_assistant.evaluate.fixes import build_fixes, write_fixes  # noqa: E402
from issue_assistant.evaluate.likely_replay import replay  # noqa: E402
from issue_assistant.likely.code_git import CommitIndexes  # noqa: E402
from issue_assistant.likely.gitread import first_parent_log  # noqa: E402
from issue_assistant.likely.rank import SETTINGS  # noqa: E402
from issue_assistant.likely.signals import Hint  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "hf-datasets.jsonl.gz"
CACHE = ROOT / ".cache" / "bench"
DOC = ROOT / "docs" / "benchmarks.md"
TITLE = "Likely files on real fixes (`bench/likely_files.py`)"
FIELDS = (("path", ("path_words",)), ("idents", ("idents",)), ("docs", ("docs",)))


def stem(snapshot: Path) -> str:
    return snapshot.name.split(".")[0]


def extra_signals(project: str):  # noqa: ANN201 - the replay's `extra`
    """BM25 over each field alone, and the likely files as they were before (the baseline:
    stack frames, then named paths, then BM25), for the table."""
    ignore = frozenset({project})

    def extra(code, text: str) -> dict[str, list[Hint]]:  # noqa: ANN001
        out = {}
        for name, fields in FIELDS:
            found = code.search(text, limit=30, ignore=ignore, fields=fields)
            out[f"words:{name}"] = [Hint(h.path, h.score, h.line) for h in found]
        before = code.likely_files(text, 10, project)
        out["baseline"] = [Hint(f.path, 1 / (i + 1), f.line) for i, f in enumerate(before)]
        return out

    return extra


def hash_linked(snapshot, fixes) -> set[int]:  # noqa: ANN001
    """The fixed issues some fixing PR links by `#N` (the brief's "578"; the rest by URL)."""
    out = set()
    for f in fixes:
        for pr in f.prs:
            body = snapshot.get_issue(pr).body or ""
            if re.search(
                rf"\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\b:?\s+#{f.issue}\b", body, re.I
            ):
                out.add(f.issue)
    return out


def warm_latency(snapshot, fixes, clone: Path, sha: str, project: str, cal) -> list[float]:  # noqa: ANN001
    """Seconds of `likely_files` (every signal, combined, functions found) per issue, warm, on
    the index of commit `sha`, for 150 fixed issues' texts."""
    from issue_assistant.evaluate.likely_replay import history_of
    from issue_assistant.likely.rank import likely_files

    history = history_of(snapshot, fixes)
    indexes = CommitIndexes(clone, keep=1)
    code = indexes.at(sha)
    out = []
    for f in sorted(fixes, key=lambda f: f.opened)[-150:]:
        issue = snapshot.get_issue(f.issue)
        t = time.perf_counter()
        likely_files(
            code,
            issue.title,
            issue.body or "",
            limit=10,
            project=project,
            history=history,
            before=f.opened,
            number=f.issue,
            calibration=cal,
        )
        out.append(time.perf_counter() - t)
    indexes.close()
    return out


def cold_build(clone: Path, sha: str) -> tuple[float, int]:
    """Index one commit from scratch (nothing memoised): seconds and files."""
    fresh = CommitIndexes(clone, keep=1)
    t = time.perf_counter()
    code = fresh.at(sha)
    took = time.perf_counter() - t
    fresh.close()
    return took, len(code)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clone", type=Path, required=True, help="a local clone (git directory)")
    parser.add_argument("--snapshot", type=Path, default=DATA, help="the issues and PRs")
    parser.add_argument("--project", default="", help="the project's name (default: the repo's)")
    parser.add_argument("--at", choices=("moment", "parent", "both"), default="moment")
    parser.add_argument("--quick", action="store_true", help="the first 40 fixed issues only")
    parser.add_argument("--reuse", action="store_true", help="score the kept replay again")
    parser.add_argument("--calibration", type=Path, default=SETTINGS, help="where the fit goes")
    parser.add_argument("--doc", type=Path, default=DOC, help="the file to write the table in")
    parser.add_argument(
        "--truth", type=Path, help="the ground truth (default: bench/NAME.fixes.jsonl)"
    )
    parser.add_argument("--cache", type=Path, default=CACHE, help="where replays are kept")
    args = parser.parse_args(argv)
    from issue_assistant.tracker.snapshot import read_snapshot

    snapshot = read_snapshot(args.snapshot)
    project = args.project or snapshot.repository.full_name.split("/")[-1]
    t = time.perf_counter()
    fixes = build_fixes(snapshot, args.clone)
    truth_seconds = time.perf_counter() - t
    truth = write_fixes(args.truth or ROOT / "bench" / f"{stem(args.snapshot)}.fixes.jsonl", fixes)
    print(f"bench: {len(fixes)} fixed issues -> {truth} ({truth_seconds:.0f} s)", file=sys.stderr)
    chosen = sorted(fixes, key=lambda f: f.opened)[: 40 if args.quick else None]
    args.cache.mkdir(parents=True, exist_ok=True)
    runs = {}
    for at in ("moment", "parent") if args.at == "both" else (args.at,):
        cache = (
            args.cache
            / f"likely-files-{stem(args.snapshot)}-{at}{'-quick' if args.quick else ''}.pkl"
        )
        if args.reuse and cache.is_file():
            runs[at] = pickle.loads(cache.read_bytes())
            continue
        print(f"bench: replaying {len(chosen)} issues at the {at} ...", file=sys.stderr)
        t = time.perf_counter()

        def progress(n: int, total: int, t0: float = t) -> None:
            if n % 50 == 0 or n == total:
                rate = n / (time.perf_counter() - t0)
                print(f"  {n}/{total} issues ({rate:.2f}/s)", file=sys.stderr, flush=True)

        rows, builds = replay(
            snapshot,
            chosen,
            str(args.clone),
            at=at,
            project=project,
            extra=extra_signals(project),
            progress=progress,
        )
        runs[at] = {"rows": rows, "builds": builds, "seconds": time.perf_counter() - t}
        cache.write_bytes(pickle.dumps(runs[at]))
    hash_form = hash_linked(snapshot, fixes)
    first = main_run(runs)
    fit = fit_calibration(first["rows"], source=f"{args.snapshot.name}, {len(fixes)} fixes")
    biggest = max(first["builds"], key=lambda b: b[2])[0]
    head = first_parent_log(args.clone)[-1]
    body = report(
        runs,
        fixes,
        fit,
        snapshot=args.snapshot.name,
        clone=f"{snapshot.repository.full_name} at {head.sha[:10]} ({head.committed:%Y-%m-%d})",
        commit=commit(),
        machine=f"Python {sys.version.split()[0]} on {platform.machine()}, {platform.system()}",
        truth=truth.relative_to(ROOT) if truth.is_relative_to(ROOT) else truth,
        truth_seconds=truth_seconds,
        cold=cold_build(args.clone, biggest),
        warm=warm_latency(snapshot, fixes, args.clone, biggest, project, fit),
        hash_issues=hash_form,
        load=" / ".join(f"{x:.1f}" for x in os.getloadavg()),
    )
    if not args.quick:
        write_calibration(args.calibration, fit, source=fit.source)
    from bench.run import replace_section

    text = args.doc.read_text(encoding="utf-8") if args.doc.is_file() else "# Benchmarks\n"
    args.doc.write_text(replace_section(text, "likely-files", TITLE, body), encoding="utf-8")
    print(body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
