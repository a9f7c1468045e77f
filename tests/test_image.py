"""What the image leaves out is never needed: the build stage's trims, checked against the code."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

from bench.image_size import TRIMMED, TRIMMED_BIN

ROOT = Path(__file__).resolve().parents[1]


def _build_stage() -> str:
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    return text.split("FROM slim AS build", 1)[1].split("\nFROM ", 1)[0]


def test_the_dockerfile_trims_what_the_estimate_trims():
    build = _build_stage()
    for rel in TRIMMED:
        assert f'"/install/lib/python3.11/site-packages/{rel}"' in build, rel
    for name in TRIMMED_BIN:
        assert f"/install/bin/{name}" in build, name
    assert "-name '*.pyi' -delete" in build


def test_scikit_learn_and_scipy_are_test_only():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = " ".join(project["dependencies"]).lower()
    assert "scikit-learn" not in runtime and "scipy" not in runtime
    assert any(d.startswith("scikit-learn") for d in project["optional-dependencies"]["dev"])
    locked = (ROOT / "requirements.lock").read_text().lower()
    for name in ("scikit-learn", "scipy", "joblib", "threadpoolctl"):
        assert not re.search(rf"^{name}==", locked, re.MULTILINE), name


# Each progress display the assistant has, driven in a process where Pygments cannot be imported
# (as in the image, where the build stage deletes it).
PROGRESS = """
import io, sys
sys.modules["pygments"] = None  # any import of it now raises ImportError
from rich.console import Console
from issue_assistant.progress import Progress
from issue_assistant.tracker.fetch import _Reporter

class Tty(io.StringIO):
    def isatty(self):
        return True

stream = Tty()
bar = Progress("evaluate", stream=stream, terminal=True)
bar.start(3, 1)
bar.advance(note="#7 cost $0.25")
bar.stop()
for terminal in (True, False):
    rep = _Reporter(Console(file=Tty(), force_terminal=terminal), enabled=True, every=0)
    rep.start(2, 0)
    rep.advance(7)
    rep.line("fetched 1/2 (#7) `code` [b]x[/b] https://example.com")
    rep.stop()
print("ok", "pygments" in {m.split(".")[0] for m, v in sys.modules.items() if v is not None})
"""


def test_the_progress_displays_run_without_pygments():
    out = subprocess.run(
        [sys.executable, "-c", PROGRESS], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.split() == ["ok", "False"]
