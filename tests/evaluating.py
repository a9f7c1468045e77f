"""Fixtures the tests of the evaluate command share (imported where used)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="module", name="cache")
def evaluate_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache folder per test module: the index and label models are built once."""
    return tmp_path_factory.mktemp("evaluate-cache")


@pytest.fixture(name="checkout")
def bare_checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty git checkout as the current folder, outside CI."""
    root = tmp_path / "checkout"
    (root / ".git").mkdir(parents=True)
    monkeypatch.chdir(root)
    monkeypatch.delenv("CI", raising=False)
    return root
