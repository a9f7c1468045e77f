"""The new configuration keys: area paths, ask requires, [context] and [code]."""

from __future__ import annotations

from pathlib import Path

import pytest

from issue_assistant.config.labels import glob_match, load_labels
from issue_assistant.config.sections import load_config
from issue_assistant.errors import UserError


def write(tmp_path: Path, text: str, name: str = "labels.toml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def test_area_paths_load_and_match(tmp_path: Path) -> None:
    labels = load_labels(
        write(tmp_path, '[[area]]\nname = "index"\npaths = ["src/index/**", "docs/*.md"]\n')
    )
    area = labels.area[0]
    assert area.owns("src/index/store.py") and area.owns("src/index/sub/deep.py")
    assert area.owns("docs/index.md") and not area.owns("docs/deep/index.md")
    assert not area.owns("src/indexer.py")
    assert glob_match("**/test_*.py", "tests/unit/test_a.py") and glob_match("**", "a/b")


@pytest.mark.parametrize(
    ("globs", "path", "owned"),
    [
        (["*.md"], "docs/deep/index.md", True),  # no slash: any depth, as in .gitignore
        (["docs/*.md"], "docs/deep/index.md", False),
        (["src/**", "!src/vendor/**"], "src/vendor/x.py", False),
        (["src/**", "!src/vendor/**"], "src/core/x.py", True),
        (["src/*.py"], "src/a/b.py", False),
    ],
)
def test_area_paths_speak_the_file_tools_glob_dialect(globs, path, owned) -> None:
    """One dialect: an area's `paths` and the file tools' `glob` agree (both .gitignore's)."""
    from issue_assistant.config.labels import Label
    from issue_assistant.tools.checkout import _glob

    assert Label.model_construct(name="a", paths=globs).owns(path) is owned
    if len(globs) == 1:
        assert _glob(globs[0]).match_file(path) is owned


@pytest.mark.parametrize("glob", ["/abs/**", "../up/*", "src/a**/b", "src/[ab.py", ""])
def test_a_bad_glob_is_an_error_naming_the_line(tmp_path: Path, glob: str) -> None:
    text = f'[[area]]\nname = "index"\npaths = ["ok/**", "{glob}"]\n'
    with pytest.raises(UserError) as err:
        load_labels(write(tmp_path, text))
    assert "bad path glob" in str(err.value) and "labels.toml:3" in str(err.value)


def test_paths_only_on_areas(tmp_path: Path) -> None:
    text = '[[type]]\nname = "bug"\npaths = ["src/**"]\n'
    with pytest.raises(UserError, match="only area labels may name paths"):
        load_labels(write(tmp_path, text))


def test_ask_requires_is_strict(tmp_path: Path) -> None:
    ok = '[[type]]\nname = "bug"\n[[type.ask]]\nwhat = "v"\nquestion = "Which?"\n'
    ok += 'requires = "version"\n'
    ask = load_labels(write(tmp_path, ok)).type[0].ask[0]
    assert ask.present_in("I run 2.3.1") and not ask.present_in("I run the latest")
    bad = ok.replace('requires = "version"', 'requires = "os"')
    with pytest.raises(UserError, match="requires"):
        load_labels(write(tmp_path, bad))


def test_context_and_code_sections(tmp_path: Path) -> None:
    cfg = load_config(
        write(
            tmp_path,
            '[context]\nreleases = 3\nsee_also_threshold = 0.6\n[code]\ncheckout = ""\n'
            "likely_files = 8\n",
            "config.toml",
        )
    )
    assert cfg.context.releases == 3 and cfg.code.likely_files == 8 and cfg.code.checkout == ""
    with pytest.raises(UserError) as err:
        load_config(write(tmp_path, "[code]\nlikely_file = 3\n", "config.toml"))
    assert "unknown key" in str(err.value) and "config.toml:2" in str(err.value)
