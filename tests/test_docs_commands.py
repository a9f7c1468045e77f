"""Every shell block of README.md and docs/*.md runs as written, so a documented command cannot rot.

A block runs (from the project root, offline, without tokens, with a time limit) unless the line
before it marks it:

    <!-- doc-test: skip (needs a token) -->   needs a token, Docker, a service or the network
    <!-- doc-test: slow (about 2 minutes) --> runs offline but too long for every test run

Every block must parse as bash, and every command of a marked block is checked without running
it: `issue-assistant ...` against the real argument parser, `python FILE ...` by `--help` after
its arguments (argparse checks the arguments it reads first), `python -c CODE` by compiling it and
finding what it imports, `python -m MODULE` and `scripts/...` by finding them. A block that runs
may begin with the install steps of the README (a virtual environment, `pip install -e .`,
`scripts/dev-install`): the test runs in that install, so they are not repeated.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from issue_assistant.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(sh|bash|shell)\n(.*?)^```", re.M | re.S)
MARK = re.compile(r"<!-- doc-test: (skip|slow) \(([^)]+)\) -->\s*$")
INSTALL = re.compile(
    r"^(python3? -m venv \.venv|\. \.venv/bin/activate|pip install -e (\.|'\.\[[\w,]+\]')"
    r"|scripts/dev-install)$"
)
TIMEOUT = 300


@dataclass
class Block:
    page: str
    line: int
    code: str
    mark: str | None  # None (runs), "skip" or "slow"
    why: str = ""

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


def blocks() -> list[Block]:
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
            mark = MARK.search(before)
            line = text.count("\n", 0, match.start()) + 1
            found.append(
                Block(
                    str(page.relative_to(ROOT)),
                    line,
                    match.group(2),
                    mark and mark.group(1),
                    mark.group(2) if mark else "",
                )
            )
    return found


def commands(code: str) -> list[list[str]]:
    """The simple commands of a block: words, without leading VAR=value assignments."""
    out = []
    for line in code.replace("\\\n", " ").splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split, lexer.commenters = True, ""
        words = list(lexer)
        # A comment starts at a word that starts with `#` (OWNER/REPO#123 is one word).
        words = words[: next((i for i, w in enumerate(words) if w.startswith("#")), len(words))]
        command: list[str] = []
        for word in [*words, "&&"]:
            if word in ("&&", "||", ";", "|"):
                while command and re.match(r"^[A-Za-z_]\w*=", command[0]):
                    command.pop(0)
                if command:
                    out.append(command)
                command = []
            else:
                command.append(word)
    return out


def _env(tmp_path: Path) -> dict[str, str]:
    secret = ("GITHUB_TOKEN", "GH_TOKEN", "ANTHROPIC_API_KEY", "GH_REPO", "GITHUB_REPOSITORY")
    env = {k: v for k, v in os.environ.items() if k not in secret}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    # TMPDIR: what a block writes to "${TMPDIR:-/tmp}" is this run's own (a report is never
    # overwritten: a second run would find the first one's)
    env.update(
        HOME=str(tmp_path), XDG_CACHE_HOME=str(tmp_path / "cache"), CI="1", TMPDIR=str(tmp_path)
    )
    return env


def check_command(words: list[str], env: dict[str, str]) -> None:
    """Check one command of a block that is not run; an AssertionError says what is wrong."""
    program, args = words[0], words[1:]
    if program == "issue-assistant":
        try:
            build_parser().parse_args(args)
        except SystemExit as exc:
            assert exc.code == 0, f"`{shlex.join(words)}` does not parse"
    elif program in ("python", "python3", "python3.11") and args[:1] == ["-c"]:
        tree = ast.parse(args[1])
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    assert importlib.util.find_spec(alias.name), f"no module {alias.name}"
    elif program in ("python", "python3", "python3.11") and args[:1] == ["-m"]:
        assert importlib.util.find_spec(args[1]), f"no module {args[1]}"
    elif program in ("python", "python3") and args and args[0].endswith(".py"):
        assert (ROOT / args[0]).is_file(), f"no file {args[0]}"
        done = subprocess.run(
            [sys.executable, *args, "--help"], cwd=ROOT, env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, f"`{shlex.join(words)} --help`: {done.stderr[-800:]}"
    elif program.startswith("scripts/"):
        assert os.access(ROOT / program, os.X_OK), f"{program} is not an executable file"


ALL = blocks()


def test_the_pages_have_shell_blocks_and_marks_say_why():
    assert len(ALL) >= 15
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for mark in re.finditer(r"<!-- doc-test:.*-->", text):
            assert MARK.search(mark.group(0)), f"{page.name}: malformed {mark.group(0)}"


@pytest.mark.parametrize("block", ALL, ids=[b.id for b in ALL])
def test_every_block_parses_as_bash(block):
    done = subprocess.run(["bash", "-n"], input=block.code, capture_output=True, text=True)
    assert done.returncode == 0, f"{block.id}: {done.stderr}"


MARKED = [b for b in ALL if b.mark]


@pytest.mark.parametrize("block", MARKED, ids=[b.id for b in MARKED])
def test_the_commands_of_a_block_not_run_are_valid(block, tmp_path):
    for words in commands(block.code):
        check_command(words, _env(tmp_path))


RUN = [b for b in ALL if not b.mark]


@pytest.mark.parametrize("block", RUN, ids=[b.id for b in RUN])
def test_a_block_runs_as_written(block, tmp_path):
    steps = [s.strip() for s in block.code.strip().split("&&")]
    while steps and INSTALL.match(steps[0]):
        steps.pop(0)
    assert steps, f"{block.id}: nothing left to run"
    script = "set -euo pipefail\n" + " && ".join(steps) + "\n"
    done = subprocess.run(
        ["bash", "-c", script],
        cwd=ROOT,
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 0, f"{block.id} exited {done.returncode}:\n{done.stderr[-2000:]}"


def test_the_readme_test_command_is_what_ci_runs():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    tests = [b for b in ALL if b.page == "README.md" and "python -m pytest" in b.code]
    assert len(tests) == 1 and tests[0].mark == "slow", "one README test command, marked slow"
    command = tests[0].code.strip()
    assert command in ci.splitlines(), ".ci/run must run the README's test command as written"
    assert "scripts/dev-install" in command and "scripts/dev-install" in readme


@pytest.mark.parametrize(
    "command",
    [
        "issue-assistant analyze --snapshot x.jsonl.gz --isue 3",
        "issue-assistant evaluate --issues many",
        "python bench/run.py --only nosuchsection",
        "python bench/no_such_file.py",
        "python -c 'import bench.section_nosuch as s'",
        "python -m issue_assistant.nosuch",
        "scripts/no-such-script",
    ],
)
def test_a_command_that_rotted_is_caught(command, tmp_path):
    with pytest.raises(AssertionError):
        for words in commands(command):
            check_command(words, _env(tmp_path))


def test_commands_split_on_operators_and_drop_assignments():
    code = "# a comment\nGH_REPO=o/r TOKEN=x issue-assistant evaluate && a | b; c \\\n  --flag\n"
    assert commands(code) == [["issue-assistant", "evaluate"], ["a"], ["b"], ["c", "--flag"]]
    assert commands("issue-assistant analyze o/r#12   # the comment") == [
        ["issue-assistant", "analyze", "o/r#12"]
    ]
