"""Rerun the reliability tests and rewrite `docs/reliability.md` from what they recorded.

    python -m tests.reliability            # every test file that records "reliability"
    python -m tests.reliability -k race    # passed on to pytest

Tests that try attacks, races or faults record `record_property("reliability", json)` with
`category`, `cases`, `wrong_writes`, `doubled_writes` and `tracebacks` (measured, not typed),
optionally `leaks` (secrets read where they must not be), `kind` and `where` (what was tried).
This runs those test files with `--junitxml`, adds the properties up by category, lists every
failed test as a finding, and renders the page.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
PAGE = ROOT / "docs" / "reliability.md"
COMMAND = "python -m tests.reliability"
PROPERTY = "reliability"
ORDER = [
    "generated",
    "injection",
    "fault",
    "race",
    "input",
    "engine",
    "sandbox",
    "cache",
    "init",
    "sweep",
    "change",
    "asof",
    "text",
]
TITLES = {
    "generated": "generated cases (hypothesis)",
    "injection": "prompt-injection corpus",
    "fault": "network faults",
    "race": "races",
    "input": "malformed inputs",
    "engine": "engine answers that crash",
    "sandbox": "the read-only sandbox",
    "cache": "caches and files that heal",
    "init": "init on real-world labels",
    "sweep": "the approval sweep",
    "change": "the repository changing under the assistant",
    "asof": "as of the moment",
    "text": "text in the comment and context files",
}
COUNTS = ("cases", "wrong_writes", "doubled_writes", "tracebacks", "leaks")


@dataclass
class Category:
    name: str
    tests: int = 0
    failed: int = 0
    totals: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COUNTS, 0))
    kinds: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    bad: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))

    @property
    def title(self) -> str:
        return TITLES.get(self.name, self.name)

    @property
    def places(self) -> list[str]:
        """Every place something was tried (the columns of the matrix)."""
        return sorted({w for wheres in self.kinds.values() for w in wheres})

    def cell(self, kind: str, where: str) -> str:
        if where not in self.kinds[kind]:
            return ""
        return "✗" if where in self.bad.get(kind, ()) else "✓"


@dataclass
class Finding:
    test: str
    message: str


def reliability_files() -> list[Path]:
    """The test files that record the property (found by its name in their text)."""

    def records(text: str) -> bool:
        return "record_property" in text and f'"{PROPERTY}"' in text

    return sorted(p for p in TESTS.glob("test_*.py") if records(p.read_text(encoding="utf-8")))


def run_tests(files: list[Path], junit: Path, extra: list[str]) -> int:
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={junit}"]
    cmd += ["-o", "junit_family=xunit1", "-o", "junit_logging=no"]  # xunit1 keeps properties
    cmd += [*[str(f.relative_to(ROOT)) for f in files], *extra]
    return subprocess.run(cmd, cwd=ROOT, check=False).returncode


def aggregate(junit: Path) -> tuple[list[Category], list[Finding], int]:
    """Categories with their totals, the findings (failed tests), and the number of tests run."""
    categories: dict[str, Category] = {}
    findings: list[Finding] = []
    ran = 0
    for case in ET.parse(junit).getroot().iter("testcase"):
        ran += 1
        name = f"{case.get('classname', '')}::{case.get('name', '')}"
        problem = case.find("failure")
        if problem is None:
            problem = case.find("error")
        if problem is not None:
            text = (problem.get("message") or problem.text or "failed").strip().splitlines()
            findings.append(Finding(name, text[0][:300] if text else "failed"))
        for prop in case.iter("property"):
            if prop.get("name") != PROPERTY:
                continue
            data = json.loads(prop.get("value") or "{}")
            cat = categories.setdefault(data["category"], Category(data["category"]))
            cat.tests += 1
            cat.failed += problem is not None
            for key in COUNTS:
                cat.totals[key] += int(data.get(key, 0))
            if data.get("kind"):
                cat.kinds[data["kind"]].add(data.get("where", ""))
                if problem is not None or any(data.get(k, 0) for k in COUNTS[1:]):
                    cat.bad[data["kind"]].add(data.get("where", ""))
    order = {name: i for i, name in enumerate(ORDER)}
    ranked = sorted(categories.values(), key=lambda c: (order.get(c.name, len(ORDER)), c.name))
    return ranked, findings, ran


def commit() -> str:
    def git(*args: str) -> str:
        out = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=False)
        return out.stdout.strip()

    head = git("rev-parse", "--short", "HEAD") or "unknown"
    dirty = git("status", "--porcelain", "--untracked-files=no", "--", "issue_assistant", "tests")
    return f"{head} (with uncommitted changes)" if dirty else head


def render(categories: list[Category], findings: list[Finding], ran: int, files: list[Path]) -> str:
    env = Environment(
        loader=FileSystemLoader(TESTS / "templates"),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    totals = {k: sum(c.totals[k] for c in categories) for k in COUNTS}
    return env.get_template("reliability.md.j2").render(
        categories=categories,
        findings=findings,
        totals=totals,
        ran=ran,
        files=[f.relative_to(ROOT).as_posix() for f in files],
        command=COMMAND,
        commit=commit(),
        date=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        python=platform.python_version(),
        machine=f"{platform.system()} {platform.machine()}",
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", type=Path, default=PAGE, help="the page to write")
    parser.add_argument("--junit", type=Path, help="aggregate this junit XML instead of running")
    args, extra = parser.parse_known_args(argv)
    files = reliability_files()
    if args.junit is None:
        with tempfile.TemporaryDirectory() as tmp:
            junit = Path(tmp) / "reliability.xml"
            run_tests(files, junit, extra)
            categories, findings, ran = aggregate(junit)
    else:
        categories, findings, ran = aggregate(args.junit)
    text = render(categories, findings, ran, files)
    args.output.write_text(text, encoding="utf-8")
    totals = {k: sum(c.totals[k] for c in categories) for k in COUNTS}
    print(
        f"{args.output}: {totals['cases']} cases in {ran} tests, {len(findings)} finding(s), "
        f"{totals['wrong_writes']} wrong / {totals['doubled_writes']} doubled writes, "
        f"{totals['tracebacks']} tracebacks, {totals['leaks']} leaks"
    )
    bad = findings or any(totals[k] for k in COUNTS[1:])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
