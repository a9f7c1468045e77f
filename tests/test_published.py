"""The action's reference from the package metadata: `init` writes it, `config check` refuses a
placeholder in any workflow, naming the file and line and what to write instead."""

from __future__ import annotations

from pathlib import Path

import pytest

from issue_assistant.cli import main
from issue_assistant.published import Published, placeholder_uses, published, repository_of

ROOT = Path(__file__).resolve().parent.parent
POETRY = ROOT.parent / "shared" / "data" / "poetry-sample.jsonl.gz"
WORKFLOW = Path(".github/workflows/issue-assistant.yml")


def _check(folder: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.chdir(folder)
    return main(["config", "check"])  # finds what init wrote (.github/issue-assistant/)


def test_init_writes_the_published_action_and_config_check_passes_it(tmp_path, capsys, monkeypatch):
    assert main(["init", "--dir", str(tmp_path), "--snapshot", str(POETRY)]) == 0
    text = (tmp_path / WORKFLOW).read_text(encoding="utf-8")
    assert f"uses: {published().action}  #" in text and "OWNER" not in text
    capsys.readouterr()
    assert _check(tmp_path, monkeypatch) == 0
    assert capsys.readouterr().out.rstrip().endswith("ready; 1 workflow(s) checked")


def test_config_check_fails_on_a_placeholder_naming_file_line_and_the_fix(
    tmp_path, capsys, monkeypatch
):
    assert main(["init", "--dir", str(tmp_path), "--snapshot", str(POETRY)]) == 0
    path = tmp_path / WORKFLOW
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    number = next(i for i, line in enumerate(lines, 1) if published().action in line)
    lines[number - 1] = "        uses: OWNER/issue-assistant@v1\n"
    path.write_text("".join(lines), encoding="utf-8")
    capsys.readouterr()
    assert _check(tmp_path, monkeypatch) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert f"{WORKFLOW}:{number}: `uses: OWNER/issue-assistant@v1` is a placeholder" in err[0]
    assert f"write `uses: {published().action}`" in err[0]


@pytest.mark.parametrize(
    ("line", "found"),
    [
        ("      - uses: OWNER/issue-assistant@v1", "OWNER/issue-assistant@v1"),
        ('        uses: "OWNER/REPO@main"  # yours', "OWNER/REPO@main"),
        ("uses: someone/REPO/sub/dir@v2", "someone/REPO/sub/dir@v2"),
        ("      - uses: actions/checkout@v4", None),
        ("      - uses: ./.github/actions/issue-assistant", None),
        ("        uses: docker://ghcr.io/OWNER/x:v1", None),
        ("        # uses: OWNER/issue-assistant@v1", None),
        ("        run: echo uses: OWNER/x@v1", None),
        ("      - uses: owner/issue-assistant@v1", None),  # a real (lowercase) account
    ],
)
def test_placeholder_uses(line, found):
    assert placeholder_uses(f"steps:\n{line}\n") == ([(2, found)] if found else [])


def test_repository_and_references_from_the_metadata_urls():
    urls = ["Homepage, https://example.org", "Repository, https://github.com/Octo-Org/Tri.age.git"]
    assert repository_of(urls) == "Octo-Org/Tri.age"
    assert repository_of(["Repository, https://gitlab.com/a/b"]) is None
    release = Published("Octo-Org/Tri.age", "2.3.1")
    assert (release.action, release.image) == ("Octo-Org/Tri.age@v2", "ghcr.io/octo-org/tri.age:v2")


def test_a_package_that_names_no_repository_is_a_clear_error(monkeypatch):
    from issue_assistant import published as module
    from issue_assistant.errors import UserError

    monkeypatch.setattr(module, "_source_project", lambda: {"name": "x", "version": "1.0.0"})
    with pytest.raises(UserError, match=r"\[project.urls\] of pyproject.toml"):
        published()
