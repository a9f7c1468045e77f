"""What the image's Python layer weighs: the Dockerfile's build stage replayed without Docker.

    python bench/image_size.py [EXTRAS]    # e.g. '[mcp]'; needs the package index (pip)

Installs the package and `requirements.lock` (hash-checked) into a temporary prefix (as the build
stage does: no compile, then the test suites and `TRIMMED` removed, `.pyi` stubs deleted, the
symbols an extension module does not export stripped outside `*.libs/`, the libraries
byte-compiled in place of their sources, the package beside its own), and prints each
distribution's share in MB (files under the top-level names its RECORD lists, their `.pyc`
included) as a Markdown table, and the image's estimate: that plus the base image's size
(`BASE_MB`, not measured here: no Docker; docs/github-action.md). Not a `section_*` benchmark:
it needs the network.
"""

from __future__ import annotations

import csv
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# What the Dockerfile's build stage removes beside the test suites (tests/test_image.py checks
# the Dockerfile names each): paths under site-packages, then under bin/.
TRIMMED = ("numpy/f2py", "numpy/distutils", "numpy/_core/include", "pygments")
TRIMMED_BIN = ("f2py", "numpy-config", "pygmentize")
# The base image's size is not measured here (no Docker): python:3.11-slim-bookworm is 130.0 MB
# on disk by docker-library/repo-info (docs/github-action.md); the image is about that plus this.
BASE_MB = 130.0
# The one distribution whose `.py` sources stay in the image (a traceback through our own code
# shows its lines); every other keeps only its byte code, compiled where its source was.
KEEP_SOURCES = "issue_assistant"
STRIP = ("strip", "--strip-unneeded")


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def build(prefix: Path, extras: str = "") -> Path:
    """The build stage's steps into `prefix`; its site-packages.

    `--ignore-installed` is what keeps this off the running environment: without it, pip
    "replaces" the packages this environment already has at other versions, uninstalling them
    from it (the editable install of this package included) while it installs into `prefix`.
    """
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--ignore-installed"]
    pip += ["--no-compile", "--prefix", str(prefix)]
    locked = ["--require-hashes", "--no-deps", "--requirement", "requirements.lock"]
    subprocess.run([*pip, *locked], check=True, cwd=ROOT)
    subprocess.run([*pip, "--no-deps", "."], check=True, cwd=ROOT)
    if extras:
        # as the Dockerfile: the lock's versions, without its hashes, constrain the locked
        # packages the extras need too
        lock = (ROOT / "requirements.lock").read_text(encoding="utf-8")
        versions = "\n".join(
            line.rstrip(" \\") for line in lock.splitlines() if "--hash=" not in line
        )
        locked_versions = prefix / "locked.txt"
        locked_versions.write_text(versions + "\n", encoding="utf-8")
        constrained = ["--constraint", str(locked_versions), f".{extras}"]
        subprocess.run([*pip, *constrained], check=True, cwd=ROOT)
    for tests in [p for p in prefix.rglob("tests") if p.is_dir()]:
        shutil.rmtree(tests, ignore_errors=True)
    site = next(prefix.glob("lib/python3*/site-packages"))
    for rel in TRIMMED:
        shutil.rmtree(site / rel, ignore_errors=True)
    for name in TRIMMED_BIN:
        (prefix / "bin" / name).unlink(missing_ok=True)
    for stub in prefix.rglob("*.pyi"):
        stub.unlink()
    libs = [p for p in prefix.rglob("*.so*") if p.is_file() and not p.parent.name.endswith(".libs")]
    if libs and shutil.which("strip"):
        subprocess.run([*STRIP, *map(str, libs)], check=True)
    byte_compile(site)
    return site


def byte_compile(site: Path) -> None:
    """Compile `site` as the build stage does: every library's modules to byte code where its
    source was (which Python imports without the source), the sources then deleted; the
    package's own in `__pycache__` beside its kept sources."""
    compile_all = [sys.executable, "-m", "compileall", "-q", "-j", "0"]
    compile_all += ["--invalidation-mode", "unchecked-hash"]
    own = f"/{KEEP_SOURCES}/"
    subprocess.run([*compile_all, "-b", "-x", own, str(site)], check=True)
    for source in site.rglob("*.py"):
        if own not in source.as_posix():
            source.unlink()
    subprocess.run([*compile_all, str(site / KEEP_SOURCES)], check=True)


def shares(site: Path) -> list[tuple[int, str]]:
    """(bytes, distribution) for each distribution in `site`, largest first."""
    rows, claimed = [], set()
    for record in site.glob("*.dist-info/RECORD"):
        name = record.parent.name.removesuffix(".dist-info").rsplit("-", 1)[0]
        with record.open(newline="") as f:
            tops = {Path(r[0]).parts[0] for r in csv.reader(f) if r and not r[0].startswith("..")}
        tops = {t for t in tops - {"__pycache__", "bin"} if (site / t).exists()} - claimed
        claimed |= tops
        rows.append((sum(_size(site / t) for t in tops), name))
    return sorted(rows, reverse=True)


def total_mb(site: Path) -> float:
    """The whole site-packages, in MB."""
    return _size(site) / 1e6


def table(site: Path) -> str:
    lines = ["| distribution | MB |", "| --- | --- |"]
    lines += [f"| {name} | {n / 1e6:.1f} |" for n, name in shares(site)]
    total = total_mb(site)
    lines.append(f"| **site-packages in all** | **{total:.1f}** |")
    lines.append(f"| the base image (not measured: `BASE_MB`) | about {BASE_MB:.0f} |")
    lines.append(f"| **the image, estimated** | **about {total + BASE_MB:.0f}** |")
    return "\n".join(lines)


if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="image-size-") as tmp:
        print(table(build(Path(tmp), sys.argv[1] if len(sys.argv) > 1 else "")))
