"""The ground truth for likely files, built from a tiny git repository the test makes."""

from __future__ import annotations

from pathlib import Path

import pytest

from issue_assistant.errors import UserError
from issue_assistant.evaluate.fixes import build_fixes, file_kind, read_fixes, write_fixes
from issue_assistant.likely.code_git import CommitIndexes
from issue_assistant.likely.functions import spans, touched
from issue_assistant.likely.gitread import commit_before, first_parent_log
from tests import tinygit


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    return tinygit.build(tmp_path_factory.mktemp("tiny") / "tiny")


def test_kinds_of_files() -> None:
    assert file_kind("src/datasets/load.py") == "source"
    assert file_kind("setup.py") == "source"
    assert file_kind("tests/test_load.py") == "test"
    assert file_kind("src/pkg/test_utils.py") == "test"
    assert file_kind("tests/conftest.py") == "test"
    assert file_kind("docs/source/loading.mdx") == "doc"
    assert file_kind("CHANGELOG.md") == "doc"
    assert file_kind("README.md") == "doc"


def test_each_fixed_issue_gets_its_commit_parent_moment_and_files(repo) -> None:  # noqa: ANN001
    root, shas = repo
    fixes = {f.issue: f for f in build_fixes(tinygit.snapshot(), root)}
    # #14's pull request never reached the history; #16 fixes another repository's #12
    assert sorted(fixes) == [10, 12]
    f10 = fixes[10]
    assert f10.prs == [11] and f10.commits == [shas["fix10"]]
    assert f10.parent == shas["docs"]  # the code when the fix began
    assert f10.moment == shas["docs"]  # the last commit before #10 was opened (day 3)
    kinds = {f.path: (f.kind, f.status) for f in f10.files}
    assert kinds == {
        "src/tiny/core.py": ("source", "M"),
        "tests/test_core.py": ("test", "M"),
        "CHANGELOG.md": ("doc", "A"),
    }
    assert f10.paths() == ["src/tiny/core.py"]
    assert f10.functions() == ["src/tiny/core.py::Store.get"]
    # added files are not "findable" at the moment: CHANGELOG.md is left out of every measure
    assert f10.paths(("source", "test", "doc")) == ["src/tiny/core.py", "tests/test_core.py"]
    f12 = fixes[12]  # closed by the issue's URL
    assert f12.prs == [13] and f12.moment == shas["fix10"] and f12.parent == shas["fix10"]
    assert f12.functions() == ["src/tiny/cache.py::cache_dir"]


def test_ground_truth_round_trips_and_a_bad_line_says_where(tmp_path: Path, repo) -> None:  # noqa: ANN001
    root, _ = repo
    fixes = build_fixes(tinygit.snapshot(), root)
    path = write_fixes(tmp_path / "t.fixes.jsonl", fixes)
    assert read_fixes(path) == fixes
    lines = path.read_text().splitlines()
    path.write_text(lines[0] + "\n" + lines[1].replace('"moment"', '"momnet"') + "\n")
    with pytest.raises(UserError, match=r"t\.fixes\.jsonl:2: "):
        read_fixes(path)
    with pytest.raises(UserError, match="no such ground-truth file"):
        read_fixes(tmp_path / "missing.jsonl")


def test_not_a_clone_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="not a git repository"):
        build_fixes(tinygit.snapshot(), tmp_path)


def test_the_moment_is_the_last_commit_before(repo) -> None:  # noqa: ANN001
    root, shas = repo
    history = first_parent_log(root)
    assert [c.pull_request for c in history] == [None, 2, 11, 13, 17]
    assert commit_before(history, tinygit.day(3)).sha == shas["docs"]
    assert commit_before(history, tinygit.day(4)).sha == shas["docs"]  # strictly before
    assert commit_before(history, tinygit.day(-1)) is None


def test_each_moment_is_indexed_from_git_objects(repo) -> None:  # noqa: ANN001
    root, shas = repo
    fresh = CommitIndexes(root, keep=1)
    early = fresh.at(shas["docs"])
    assert "src/tiny/new.py" not in early.files
    assert "No entry named {key} in the store" in early.files["src/tiny/core.py"]
    late = fresh.at(shas["late"])
    assert "src/tiny/new.py" in late.files and late.sha == shas["late"]
    assert "{key!r}" in late.files["src/tiny/core.py"]
    # one index moved from commit to commit holds the same files as a fresh one
    moving = CommitIndexes(root, keep=0)
    moving.at(shas["init"])
    moved = moving.at(shas["late"])
    assert moved.files == late.files
    assert [h.path for h in moved.search("cache folder", 3)] == [
        h.path for h in late.search("cache folder", 3)
    ]
    fresh.close()
    moving.close()


def test_functions_touched_by_line_ranges() -> None:
    found = spans(tinygit.CORE, "core.py")
    assert [(s.name, s.first, s.last) for s in found] == [
        ("load", 4, 6),
        ("Store", 9, 14),
        ("Store.get", 10, 11),
        ("Store.put", 13, 14),
    ]
    assert touched(found, [(11, 11)]) == ["Store.get"]
    assert touched(found, [(12, 12)]) == ["Store"]  # between the methods: the class
    assert touched(found, [(1, 2)]) == []
    text = (
        'def f():\n    s = """\ndef not_a_function():\n"""\n    return s\n\n\ndef g():\n    pass\n'
    )
    assert [s.name for s in spans(text, "x.py")] == ["f", "g"]
