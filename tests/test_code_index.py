"""The code index: which files, how they are split into words, and the likely files."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from issue_assistant.config.sections import Config
from issue_assistant.errors import UserError
from issue_assistant.likely.checkout import checkout_for, list_files
from issue_assistant.likely.code import CodeIndex, code_index_for, comments, split_identifier
from tests import contextdata as data


@pytest.fixture(scope="module")
def git_checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return data.checkout(tmp_path_factory.mktemp("git") / "tinyparse")


def test_identifiers_split_at_camel_case_and_underscores() -> None:
    assert split_identifier("parseTokens") == ["parse", "tokens"]
    assert split_identifier("HTTPServerError") == ["http", "server", "error"]
    assert split_identifier("cache_dir") == ["cache", "dir"]
    assert split_identifier("_x") == []


def test_comments_and_docstrings_are_kept() -> None:
    text = 'x = 1  # the answer\n"""A docstring."""\n/* c block */\n// line\n'
    found = comments(text)
    assert "the answer" in found and "A docstring." in found and "c block" in found


def test_git_checkout_follows_gitignore(git_checkout: Path) -> None:
    files = list_files(git_checkout)
    assert "src/tinyparse/parser.py" in files and "docs/cache.md" in files
    assert not [f for f in files if f.startswith(("build/", "node_modules/"))]
    index = CodeIndex(git_checkout)
    assert "logo.png" not in index.files  # tracked, but binary
    assert len(index.sha or "") == 40


def test_a_walk_skips_vendored_generated_binary_large_and_symlinked_files(tmp_path: Path) -> None:
    root = data.checkout(tmp_path / "plain", git=False)
    (root / "src" / "huge.py").write_text("x = 1\n" * 50_000)
    (tmp_path / "secret.py").write_text("password = 1\n")
    os.symlink(tmp_path / "secret.py", root / "src" / "link.py")
    (root / "dist").mkdir()
    (root / "dist" / "bundle.min.js").write_text("var a;")
    index = CodeIndex(root, max_file_kb=64)
    assert sorted(index.files) == [
        "README.md",
        "docs/cache.md",
        "src/tinyparse/__init__.py",
        "src/tinyparse/cache.py",
        "src/tinyparse/lexer.py",
        "src/tinyparse/parser.py",
    ]
    assert index.sha is None


def test_a_stack_frame_naming_an_existing_file_ranks_first(git_checkout: Path) -> None:
    index = CodeIndex(git_checkout)
    text = (
        "Crash in the cache\n"
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3.11/site-packages/tinyparse/cache.py", line 7, in __init__\n'
        '  File "/home/me/app.py", line 3, in main\n'
        "CacheStore fails"
    )
    got = index.likely_files(text, 3)
    assert (got[0].path, got[0].line, got[0].reason) == ("src/tinyparse/cache.py", 7, "stack frame")
    assert len(got) == 3 and len({f.path for f in got}) == 3


def test_words_rank_files_by_identifiers_and_paths(git_checkout: Path) -> None:
    index = CodeIndex(git_checkout)
    got = index.likely_files("parse_tokens fails on an empty stream", 2)
    assert got[0].path == "src/tinyparse/parser.py" and got[0].line == 4  # the def line
    lexer = index.likely_files("the lexer splits words wrongly", 1)
    assert lexer[0].path == "src/tinyparse/lexer.py"
    assert index.likely_files("", 5) == []


def test_a_named_path_counts_even_without_a_frame(git_checkout: Path) -> None:
    index = CodeIndex(git_checkout)
    got = index.likely_files("The docs in docs/cache.md are wrong about the home folder", 3)
    assert got[0].path == "docs/cache.md" and got[0].reason == "path"


def test_link_points_at_the_commit_and_line(git_checkout: Path) -> None:
    index = CodeIndex(git_checkout)
    f = index.likely_files('File "src/tinyparse/parser.py", line 6, in parse_tokens', 1)[0]
    assert f.url("octo/tinyparse", index.sha) == (
        f"https://github.com/octo/tinyparse/blob/{index.sha}/src/tinyparse/parser.py#L6"
    )
    assert f.url("octo/tinyparse", None) is None


def test_checkout_setting(tmp_path: Path, git_checkout: Path, monkeypatch) -> None:
    assert checkout_for("", "octo/tinyparse") is None
    monkeypatch.setenv("GITHUB_WORKSPACE", str(git_checkout))
    assert checkout_for("auto", "octo/tinyparse") is None  # no origin naming the repository
    url = "https://github.com/octo/tinyparse.git"
    subprocess.run(["git", "-C", str(git_checkout), "remote", "add", "origin", url], check=True)
    assert checkout_for("auto", "octo/tinyparse") == git_checkout
    assert checkout_for("auto", "octo/other") is None
    with pytest.raises(UserError, match="no such folder"):
        checkout_for(str(tmp_path / "missing"), "octo/tinyparse")
    config = Config.model_validate({"code": {"checkout": str(git_checkout), "likely_files": 0}})
    assert code_index_for(config, "octo/tinyparse") is None


def test_the_project_name_is_not_searched_for(git_checkout: Path) -> None:
    index = CodeIndex(git_checkout)
    text = "Where do I set the cache directory? I'm on tinyparse 1.1.0."
    named = [f.path for f in index.likely_files(text, 2, project="tinyparse")]
    assert set(named) == {"src/tinyparse/cache.py", "docs/cache.md"}
