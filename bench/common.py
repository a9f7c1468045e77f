"""What every benchmark section names: the commit it measured."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def commit() -> str:
    """The checked-out commit, short; "unknown" outside a git checkout."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        )
    except OSError:
        return "unknown"
    return out.stdout.strip() if out.returncode == 0 and out.stdout.strip() else "unknown"


def reference_loop() -> float:
    """CPU seconds of a fixed pure-Python workload, the best of 3, measured in the same run as
    a benchmark so its figure can be read as a multiple of the machine's speed at that moment
    (a shared machine's speed changes within minutes): words split, lower-cased and counted in
    a dict, 20,000,000 words in all, the kind of work the engine's text handling does."""
    import time

    text = " ".join(f"Word{i % 997} value_{i % 13} Error{i % 7}" for i in range(2000)).split()
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        counts: dict[str, int] = {}
        for _ in range(3333):
            for word in text:
                key = word.lower()
                counts[key] = counts.get(key, 0) + 1
        best = min(best, time.process_time() - start)
    return best
