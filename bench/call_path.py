"""Benchmark: the call path of one issue through `pipeline.analyze`, measured against the floors.

    python bench/call_path.py [--snapshot FILE] [--issue N] [--labels FILE] [--top N] [--json]

Runs `issue-assistant analyze` on one issue of a snapshot (the `similar` engine, as the README's
first command does) in a child process that warms the cache (the index, the learned model), then
again in a second one that records, with `sys.setprofile`, every call of a function of the
package made while `pipeline.analyze` runs. Each call crosses from the module of the function
that made it (the nearest package frame below it) to the module of the function called; calls
within one module are not counted. Each module stands on its floor (`FLOORS` of
tests/test_structure.py, the README's tour). Counted, as distinct transitions (caller module ->
called module) and as calls:

- **back up**: the called module stands on a higher floor than the caller's (no import goes up,
  so the call goes through something handed down: a callback, an object of a higher floor);
- **returns**: the called module is already on the call stack below the caller (the path left
  it for another module and comes back into it before it returned).

Run from the root of the tree to measure (its `issue_assistant` and its tests/test_structure.py
are the ones imported). Nothing is written but the cache (`.cache/bench/call-path`).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

ROOT = Path.cwd()
SNAPSHOT = ROOT.parent / "shared" / "data" / "hf-datasets.jsonl.gz"
PREFIX = "issue_assistant"


def module_of(frame) -> str | None:  # noqa: ANN001 - a frame
    """The package module of `frame` ("" for the package's `__init__`), or None."""
    name = frame.f_globals.get("__name__", "")
    if name == PREFIX:
        return ""
    return name.removeprefix(PREFIX + ".") if name.startswith(PREFIX + ".") else None


def trace(argv: list[str]) -> list[tuple[str, str, bool]]:
    """The crossing calls made while `pipeline.analyze` runs during `cli.main(argv)`: (caller
    module, called module, whether the called one is on the stack below the caller)."""
    from issue_assistant import cli, pipeline

    target = pipeline.analyze.__code__
    main_thread = threading.get_ident()
    # per thread, the package module of each frame entered (None: outside the package); a
    # thread started while `pipeline.analyze` runs (the engine's) starts below its starter
    stacks: dict[int, list[str | None]] = {}
    found: list[tuple[str, str, bool]] = []
    active = [0]  # the depth at which `pipeline.analyze` runs in the main thread (0: not)

    def profile(frame, event, arg) -> None:  # noqa: ANN001 - sys.setprofile's signature
        me = threading.get_ident()
        if me not in stacks:
            stacks[me] = list(stacks[main_thread][active[0] - 1 :]) if active[0] else []
        stack = stacks[me]
        if event == "call":
            mod = module_of(frame)
            if me == main_thread and frame.f_code is target and not active[0]:
                active[0] = len(stack) + 1
            elif active[0] and mod is not None:
                caller = next((m for m in reversed(stack) if m is not None), None)
                if caller is not None and caller != mod:
                    start = active[0] - 1 if me == main_thread else 0
                    found.append((caller, mod, mod in stack[start:]))
            stack.append(mod)
        elif event == "return" and stack:
            stack.pop()
            if me == main_thread and active[0] and len(stack) < active[0]:
                active[0] = 0

    stacks[main_thread] = []
    threading.setprofile(profile)
    sys.setprofile(profile)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            code = cli.main(argv)
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
    if code != 0:
        raise SystemExit(f"analyze exited with {code}")
    return found


def summary(calls: list[tuple[str, str, bool]], top: int) -> dict:
    sys.path.insert(0, str(ROOT))
    from tests.test_structure import floor

    def level(module: str) -> int:
        return floor(module) or 0

    up = Counter((a, b) for a, b, _ in calls if level(b) > level(a))
    back = Counter((a, b) for a, b, again in calls if again)
    crossing = Counter((a, b) for a, b, _ in calls)

    def named(counter: Counter) -> list[dict]:
        return [
            {"from": a, "floor_from": level(a), "to": b, "floor_to": level(b), "calls": n}
            for (a, b), n in counter.most_common(top)
        ]

    return {
        "calls": len(calls),
        "transitions": len(crossing),
        "modules": len({m for pair in crossing for m in pair}),
        "back_up": {"transitions": len(up), "calls": sum(up.values()), "top": named(up)},
        "returns": {"transitions": len(back), "calls": sum(back.values()), "top": named(back)},
        "top": named(crossing),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--snapshot", default=str(SNAPSHOT))
    parser.add_argument("--issue", type=int, default=7016)
    parser.add_argument("--labels", default=str(ROOT / "bench" / "hf-datasets.labels.toml"))
    parser.add_argument("--cache-dir", default=str(ROOT / ".cache" / "bench" / "call-path"))
    parser.add_argument("--top", type=int, default=8)
    parser.add_argument("--json", action="store_true", help="print the counts as JSON")
    parser.add_argument("--traced", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    argv = ["analyze", "--snapshot", args.snapshot, "--issue", str(args.issue)]
    argv += ["--labels", args.labels, "--cache-dir", args.cache_dir]
    if args.traced:  # the child: one warm run, traced
        print(json.dumps(summary(trace(argv), args.top)))
        return 0
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    warm = [sys.executable, "-m", "issue_assistant", *argv]
    subprocess.run(warm, check=True, env=env, stdout=subprocess.DEVNULL)
    child = [sys.executable, __file__, *sys.argv[1:], "--traced"]
    out = json.loads(subprocess.run(child, check=True, env=env, capture_output=True).stdout)
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(
        f"{out['calls']} calls across modules ({out['transitions']} transitions between "
        f"{out['modules']} modules) while pipeline.analyze runs on #{args.issue}"
    )
    for key, what in (("back_up", "back up a floor"), ("returns", "returns to a module left")):
        part = out[key]
        print(f"{what}: {part['transitions']} transitions, {part['calls']} calls")
        for t in part["top"]:
            print(
                f"  {t['from']} ({t['floor_from']}) -> {t['to']} ({t['floor_to']}): "
                f"{t['calls']} calls"
            )
    print("top transitions:")
    for t in out["top"]:
        print(f"  {t['from']} ({t['floor_from']}) -> {t['to']} ({t['floor_to']}): {t['calls']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
