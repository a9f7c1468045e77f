"""What the image leaves out is never needed: the build stage's trims, checked against the code."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

from bench.image_size import KEEP_SOURCES, STRIP, TRIMMED, TRIMMED_BIN, byte_compile

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


def test_the_dockerfile_strips_and_compiles_as_the_estimate_does():
    build = _build_stage()
    assert f"-exec {' '.join(STRIP)} {{}} +" in build
    own = f"/{KEEP_SOURCES}/"
    assert f"--invalidation-mode unchecked-hash -b -x {own} " in build
    assert f"-name '*.py' ! -path '*{own}*' -delete" in build
    assert f"/install/lib/python3.11/site-packages/{KEEP_SOURCES}\n" in build


def test_a_library_runs_from_its_byte_code_alone(tmp_path):
    site = tmp_path / "site-packages"
    (site / "somelib").mkdir(parents=True)
    (site / "somelib" / "__init__.py").write_text("def fail():\n    raise ValueError('lib')\n")
    (site / "flat.py").write_text("WORD = 'flat'\n")
    (site / KEEP_SOURCES).mkdir()
    (site / KEEP_SOURCES / "__init__.py").write_text("def fail():\n    raise ValueError('ours')\n")
    byte_compile(site)
    assert sorted(p.relative_to(site).as_posix() for p in site.rglob("*.py")) == [
        f"{KEEP_SOURCES}/__init__.py"
    ]
    assert (site / "somelib" / "__init__.pyc").is_file() and (site / "flat.pyc").is_file()
    assert list((site / KEEP_SOURCES / "__pycache__").glob("__init__.*.pyc"))
    run = f"""
import sys, traceback
sys.path.insert(0, {str(site)!r})
import flat, somelib, {KEEP_SOURCES} as own
print(flat.WORD, somelib.__file__.endswith('__init__.pyc'), own.__file__.endswith('.py'))
for fail in (somelib.fail, own.fail):
    try:
        fail()
    except ValueError:
        traceback.print_exc(file=sys.stdout)
"""
    out = subprocess.run(
        [sys.executable, "-B", "-c", run], capture_output=True, text=True, check=True
    ).stdout
    assert out.splitlines()[0] == "flat True True"
    # a library's frame names its file and line, without the line's text; ours shows the text
    assert re.search(r'somelib.__init__\.py", line 2, in fail\n(?!\s+raise)', out)
    assert "raise ValueError('ours')" in out
