"""Benchmark: the sanitizer's time against its input size (it must be linear; 1 MB well under 1 s).

    python -c 'import bench.section_sanitizer as s; print(s.run())'

Inputs are hostile text (mentions, every link form, HTML, code spans, emphasis, brackets) and the
worst pattern found for markdown-it-py (`![a` repeated), from 64 KB to 1 MB, sanitized with the
comment's largest field limit (the summary's) and with the log lines' limit (2,000).
"""

from __future__ import annotations

import platform
import time

from bench.common import commit
from issue_assistant.comment import LIMITS
from issue_assistant.sanitize import sanitize

TITLE = "Sanitizer"
MIXED = (
    "see @mallory é@x `code` [a](https://evil.example) ![i](//evil.example/p.png) <b>x</b> "
    "www.evil.example mallory@evil.example [x]: http:evil [t][x] **b** o/r#1 &#64;u \u202e "
)
PATTERNS = {"hostile text": MIXED, "`![a` repeated": "![a"}


def _best(text: str, limit: int, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        sanitize(text, "o/r", limit)
        best = min(best, time.perf_counter() - start)
    return best


def run(quick: bool = False) -> str:
    sizes = [64_000, 256_000, 1_000_000]
    repeat = 1 if quick else 3
    rows = []
    sanitize(MIXED, "o/r")  # build the parser once, outside the timings
    for name, piece in PATTERNS.items():
        for size in sizes:
            text = (piece * (size // len(piece) + 1))[:size]
            for limit in (LIMITS["summary"], 2_000):
                ms = _best(text, limit, repeat) * 1000
                rows.append(f"| {name} | {size:,} | {limit:,} | {ms:.1f} |")
    machine = (
        f"{platform.machine()}, {platform.python_implementation()} {platform.python_version()}"
    )
    return "\n".join(
        [
            f"`issue_assistant.sanitize.sanitize`, commit `{commit()}`, {machine}, best of "
            f"{repeat}. Only a prefix of the input is cleaned and a window a little over the limit "
            "is parsed, so the time depends on the limit, not on the input's length.",
            "",
            "| input | characters | limit | ms |",
            "| --- | ---: | ---: | ---: |",
            *rows,
        ]
    )


if __name__ == "__main__":
    print(run())
