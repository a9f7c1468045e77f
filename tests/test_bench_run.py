"""bench/run.py: a full run rewrites its sections of the page, a --quick run never publishes."""

from __future__ import annotations

import types
from pathlib import Path

import pytest

from bench import run

PAGE = "# Benchmarks\n\nkept\n\n<!-- section:toy -->\nold figures\n<!-- /section:toy -->\n"


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """One section, `toy`, whose figures say whether they came from a quick run."""
    section = types.SimpleNamespace(
        TITLE="Toy", run=lambda quick=False: "quick figures" if quick else "full figures"
    )
    monkeypatch.setattr(run, "sections", lambda bench=run.ROOT / "bench": ["toy"])
    monkeypatch.setattr(run, "load", lambda name, bench=run.ROOT / "bench": section)
    page = tmp_path / "benchmarks.md"
    page.write_text(PAGE, encoding="utf-8")
    monkeypatch.setattr(run, "DOC", page)
    return page


def test_a_full_run_rewrites_the_section_and_keeps_the_rest(toy):
    assert run.main(["--only", "toy"]) == 0
    text = toy.read_text(encoding="utf-8")
    assert "full figures" in text and "old figures" not in text and "kept" in text


def test_a_quick_run_prints_and_leaves_the_published_page(toy, capsys):
    assert run.main(["--quick"]) == 0
    assert toy.read_text(encoding="utf-8") == PAGE
    assert "quick figures" in capsys.readouterr().out


def test_a_quick_run_refuses_a_published_page_and_writes_elsewhere(toy, tmp_path, capsys):
    published = run.ROOT / "docs" / "benchmarks.md"
    before = published.read_text(encoding="utf-8")
    assert run.main(["--quick", "--doc", str(published)]) == 2
    assert "not writing" in capsys.readouterr().err
    assert published.read_text(encoding="utf-8") == before
    scratch = tmp_path / "quick.md"
    assert run.main(["--quick", "--doc", str(scratch)]) == 0
    assert "quick figures" in scratch.read_text(encoding="utf-8")


def test_an_unknown_section_is_a_usage_error(toy):
    with pytest.raises(SystemExit) as done:
        run.main(["--only", "nosuch"])
    assert done.value.code == 2
