"""scripts/dev-install: llama-cpp-python built portable, and a build cache keyed by the flags.

pip's wheel cache is not keyed on CMAKE_ARGS: a wheel built once with native flags is reused
by a later install with portable ones. The keying is checked on a tiny sdist whose wheel
records the CMAKE_ARGS it was built with (an in-tree build backend, so nothing is downloaded),
not on llama-cpp-python itself (8 minutes to build).
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "dev-install"

BACKEND = """
import base64, hashlib, os, zipfile

def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    name = "flagprobe-1.0-py3-none-any.whl"
    info = "flagprobe-1.0.dist-info/"
    files = {
        "flagprobe/__init__.py": f"CMAKE_ARGS = {os.environ.get('CMAKE_ARGS', '')!r}\\n",
        info + "METADATA": "Metadata-Version: 2.1\\nName: flagprobe\\nVersion: 1.0\\n",
        info + "WHEEL": "Wheel-Version: 1.0\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n",
    }
    record = []
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w") as whl:
        for path, text in files.items():
            data = text.encode()
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            record.append(f"{path},sha256={digest.decode()},{len(data)}")
            whl.writestr(path, data)
        record.append(info + "RECORD,,")
        whl.writestr(info + "RECORD", "\\n".join(record) + "\\n")
    return name
"""
PYPROJECT = """[build-system]
requires = []
build-backend = "backend"
backend-path = ["."]

[project]
name = "flagprobe"
version = "1.0"
"""


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    # what the script reads from the environment, unset (`.ci/run` exports the AVX2 opt-in)
    outer = ("CMAKE_ARGS", "PIP_CACHE_DIR", "ISSUE_ASSISTANT_LLAMA_AVX2")
    env = {k: v for k, v in os.environ.items() if k not in outer}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    env["ISSUE_ASSISTANT_DEV_CACHE"] = str(tmp_path / "cache")
    env.update(extra)
    return env


def dry_run(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The CMAKE_ARGS and PIP_CACHE_DIR dev-install would use (`--dry-run`)."""
    done = subprocess.run(
        ["bash", str(SCRIPT), "--dry-run"],
        env=_env(tmp_path, **extra),
        capture_output=True,
        text=True,
        check=True,
    )
    return dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line[:15])


# What ggml turns on by itself with GGML_NATIVE=OFF (every x86 extension up to AVX2): a CPU
# without one of them stops with "Illegal instruction".
EXTENSIONS = ("SSE42", "AVX", "AVX2", "BMI2", "FMA", "F16C")


def test_the_default_build_is_portable(tmp_path):
    got = dry_run(tmp_path)
    flags = got["CMAKE_ARGS"].split()
    assert "-DGGML_NATIVE=OFF" in flags and "-march=native" not in got["CMAKE_ARGS"]
    assert "GGML_NATIVE=ON" not in got["CMAKE_ARGS"]
    assert all(f"-DGGML_{x}=OFF" in flags for x in EXTENSIONS), flags
    assert not [f for f in flags if f.endswith("=ON")]
    assert Path(got["PIP_CACHE_DIR"]).parent == tmp_path / "cache"
    assert dry_run(tmp_path, ISSUE_ASSISTANT_LLAMA_AVX2="0")["CMAKE_ARGS"] == got["CMAKE_ARGS"]


def test_avx2_is_an_opt_in_with_a_cache_of_its_own(tmp_path):
    portable = dry_run(tmp_path)
    fast = dry_run(tmp_path, ISSUE_ASSISTANT_LLAMA_AVX2="1")
    flags = fast["CMAKE_ARGS"].split()
    assert {"-DGGML_NATIVE=OFF", "-DGGML_AVX2=ON", "-DGGML_FMA=ON", "-DGGML_F16C=ON"} <= set(flags)
    assert fast["PIP_CACHE_DIR"] != portable["PIP_CACHE_DIR"]
    # CMAKE_ARGS of one's own still win over both
    own = dry_run(tmp_path, ISSUE_ASSISTANT_LLAMA_AVX2="1", CMAKE_ARGS="-DGGML_NATIVE=ON")
    assert own["CMAKE_ARGS"] == "-DGGML_NATIVE=ON"
    bad = subprocess.run(
        ["bash", str(SCRIPT), "--dry-run"],
        env=_env(tmp_path, ISSUE_ASSISTANT_LLAMA_AVX2="yes"),
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2 and "ISSUE_ASSISTANT_LLAMA_AVX2 is 1 or unset" in bad.stderr
    # Flags of one's own keep GGML_NATIVE off unless they set it.
    assert dry_run(tmp_path, CMAKE_ARGS="-DGGML_CUDA=on")["CMAKE_ARGS"] == (
        "-DGGML_CUDA=on -DGGML_NATIVE=OFF"
    )


def test_the_cache_folder_is_named_by_the_flags(tmp_path):
    portable = dry_run(tmp_path)["PIP_CACHE_DIR"]
    assert dry_run(tmp_path)["PIP_CACHE_DIR"] == portable
    native = dry_run(tmp_path, CMAKE_ARGS="-DGGML_NATIVE=ON")["PIP_CACHE_DIR"]
    assert native != portable


def test_outside_a_virtual_environment_it_refuses(tmp_path):
    base = Path(sys.base_prefix) / "bin"
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "python").symlink_to(base / "python3")
    env = _env(tmp_path, PATH=f"{shim}{os.pathsep}/usr/bin:/bin")
    env.pop("VIRTUAL_ENV", None)
    done = subprocess.run(["bash", str(SCRIPT)], env=env, capture_output=True, text=True)
    assert done.returncode == 2 and "no virtual environment is active" in done.stderr


def _sdist(index: Path) -> None:
    index.mkdir()
    with tarfile.open(index / "flagprobe-1.0.tar.gz", "w:gz") as tar:
        for name, text in {"backend.py": BACKEND, "pyproject.toml": PYPROJECT}.items():
            data = text.encode()
            info = tarfile.TarInfo(f"flagprobe-1.0/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def _install(tmp_path: Path, flags: str, cache: str) -> str:
    """Install the probe's sdist with `flags` and `cache`: the flags its wheel was built with."""
    target = tmp_path / "site"
    env = _env(tmp_path, CMAKE_ARGS=flags, PIP_CACHE_DIR=cache)
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-index", "--upgrade"]
        + ["--find-links", str(tmp_path / "index"), "--target", str(target), "flagprobe"],
        env=env,
        check=True,
        capture_output=True,
        cwd=tmp_path,
    )
    namespace: dict[str, str] = {}
    exec((target / "flagprobe" / "__init__.py").read_text(), namespace)
    return namespace["CMAKE_ARGS"]


@pytest.mark.slow
def test_a_wheel_built_with_other_flags_is_never_reused(tmp_path):
    _sdist(tmp_path / "index")
    # What goes wrong with one cache for all flags: the native wheel comes back.
    shared = str(tmp_path / "shared")
    assert _install(tmp_path, "-DGGML_NATIVE=ON", shared) == "-DGGML_NATIVE=ON"
    assert _install(tmp_path, "-DGGML_NATIVE=OFF", shared) == "-DGGML_NATIVE=ON"
    # dev-install's cache, keyed by the flags: each install gets a wheel of its own flags, and
    # the same flags reuse theirs.
    for flags in ("-DGGML_NATIVE=ON", "-DGGML_NATIVE=OFF", "-DGGML_NATIVE=ON"):
        keyed = dry_run(tmp_path, CMAKE_ARGS=flags)
        assert _install(tmp_path, flags, keyed["PIP_CACHE_DIR"]) == flags
    wheels = sorted((tmp_path / "cache").glob("pip-*/wheels/**/flagprobe-1.0-*.whl"))
    assert len(wheels) == 2


def test_ci_starts_from_a_fresh_virtual_environment():
    """`.ci/run` removes a `.venv` left from before, then runs the README's command."""
    lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    readme = next(i for i, ln in enumerate(lines) if ln.startswith("python3 -m venv .venv"))
    assert "rm -rf .venv" in lines[:readme]
