"""`config check` warns of what will make the engines answer worse; `--strict` makes it an error."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from issue_assistant.cli import main
from issue_assistant.config.files import load_both
from issue_assistant.config.labels import LabelsConfig
from issue_assistant.config.sections import Config
from issue_assistant.config.weak_spots import absent_labels, unwritten, weak_spots

DESCRIBED = '[project]\ndescription = "A parser of small configuration files."\n'

# As `init` drafts it: a `"" # TODO` description, a placeholder, a label not proposed.
DRAFT = """
[[type]]
name = "bug"
description = "" # TODO: what it means, for a newcomer

[[type]]
name = "feature"
description = "A new feature."

[[area]]
name = "area/docs"
description = "TODO: what it means"

[[area]]
name = "area/cli"
description = "The command line."

[[area]]
name = "area/ci"
description = ""
propose = false
"""


def lines(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln]


def test_a_draft_warns_once_per_description_missing_and_still_passes(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "labels.toml").write_text(DRAFT)
    (tmp_path / "config.toml").write_text('[project]\ndescription = ""\n')
    assert main(["config", "check"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("ok: labels (2 type, 3 area")
    assert lines(err) == [
        "issue-assistant: warning: labels.toml: the type `bug`'s description is empty: the LLM "
        "engines tell the types apart by it",
        "issue-assistant: warning: labels.toml: the area label `area/docs`'s description is still "
        "a placeholder: the LLM engines read it to decide when the label fits",
        "issue-assistant: warning: config.toml: [project] description is empty or a placeholder: "
        "the LLM engines read it to know what the project is",
    ]  # not `area/ci`: it is never proposed, so no engine reads it


def test_strict_turns_the_warnings_into_errors(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "labels.toml").write_text(DRAFT)
    (tmp_path / "config.toml").write_text(DESCRIBED)
    assert main(["config", "check", "--strict"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert len(lines(err)) == 2 and all(
        ln.startswith("issue-assistant: error: labels.toml: the ") for ln in lines(err)
    )
    assert main(["config", "check", "--strict", "--json"]) == 2
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] is False and len(data["warnings"]) == 2
    assert "`area/docs`" in data["warnings"][1]


def test_a_complete_configuration_has_no_warning_even_strict(tmp_path, capsys, monkeypatch):
    root = Path(__file__).resolve().parents[1]
    monkeypatch.chdir(tmp_path)
    shutil.copy(root / "labels.toml", tmp_path / "labels.toml")
    shutil.copy(root / "config.toml", tmp_path / "config.toml")
    assert main(["config", "check", "--strict"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("ok: ") and err == ""
    assert main(["config", "check", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["warnings"] == []


def test_no_config_file_means_no_project_description(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "labels.toml").write_text('[[type]]\nname = "bug"\ndescription = "Broken."\n')
    assert main(["config", "check"]) == 0
    assert lines(capsys.readouterr().err) == [
        "issue-assistant: warning: config.toml (none found): [project] description is empty or "
        "a placeholder: the LLM engines read it to know what the project is"
    ]


def test_what_counts_as_unwritten():
    for text in ("", "  \n", "TODO", "todo: say it", "TBD", " FIXME later"):
        assert unwritten(text), text
    for text in ("A crash.", "Fix the TODO list", "TODOS are tracked here", "Tbdx"):
        assert not unwritten(text), text


def test_weak_spots_of_the_shipped_example_and_a_draft(tmp_path):
    root = Path(__file__).resolve().parents[1]
    labels, config = load_both(str(root / "labels.toml"), str(root / "config.toml"))
    assert weak_spots(labels, config) == ([], [])
    draft = LabelsConfig.model_validate(
        {"type": [{"name": "bug"}], "priority": [{"name": "p1", "description": "TODO"}]}
    )
    in_labels, in_config = weak_spots(draft, config)
    assert [w.split("`")[1] for w in in_labels] == ["bug", "p1"] and in_config == []


def test_labels_the_repository_lacks_are_named_with_the_nearest_it_has():
    labels = LabelsConfig.model_validate(
        {
            "needs_info": "needs info",
            "type": [{"name": "Bug"}, {"name": "kind/featur"}],
            "area": [{"name": "area/cli"}],
        }
    )
    have = ["bug", "kind/feature", "area/cli", "area/docs"]
    [line] = absent_labels(labels, have, "o/r")
    # `Bug` is GitHub's `bug`; the needs-info label may be created when first used
    assert line.startswith("names `kind/featur`, a label o/r does not have")
    assert "(did you mean `kind/feature`?)" in line and "never learned" in line
    assert absent_labels(labels, [], "o/r") == []  # the repository's labels unknown
    far = LabelsConfig.model_validate({"area": [{"name": n} for n in "abcde"]})
    [one] = absent_labels(far, have, "o/r")
    assert one.startswith("names 5 labels o/r does not have (`a`, `b`, `c`, ...)")


def test_analyze_and_evaluate_warn_of_a_label_the_snapshot_lacks(tmp_path, capsys, monkeypatch):
    from tests.conftest import POETRY

    monkeypatch.chdir(tmp_path)
    (tmp_path / "labels.toml").write_text(
        '[[type]]\nname = "kind/bug"\n[[type]]\nname = "kind/featur"\n'
    )
    common = ["--snapshot", str(POETRY), "--labels", "labels.toml"]
    common += ["--cache-dir", str(tmp_path / "cache")]
    warning = "names `kind/featur`, a label python-poetry/poetry does not have (did you mean"
    assert main(["analyze", *common, "--issue", "10296"]) == 0
    assert warning in capsys.readouterr().err
    assert main(["evaluate", *common, "--limit", "3"]) == 0
    assert warning in capsys.readouterr().err


def described(folder: Path, labels: dict[str, str]) -> None:
    """labels.toml with these (group, name) labels, each described, and config.toml."""
    (folder / "labels.toml").write_text(
        "".join(f'[[{g}]]\nname = "{n}"\ndescription = "It."\n' for n, g in labels.items())
    )
    (folder / "config.toml").write_text(DESCRIBED)


def test_config_check_checks_the_labels_against_a_snapshot(tmp_path, capsys, monkeypatch):
    from tests.conftest import POETRY

    monkeypatch.chdir(tmp_path)
    described(tmp_path, {"kind/bug": "type", "kind/featur": "type"})
    argv = ["config", "check", "--snapshot", str(POETRY)]
    assert main(argv) == 0
    [warning] = lines(capsys.readouterr().err)
    assert warning.startswith("issue-assistant: warning: labels.toml: names `kind/featur`, ")
    assert "a label python-poetry/poetry does not have (did you mean `kind/feature`?)" in warning
    assert main([*argv, "--strict"]) == 2
    assert "error: labels.toml: names `kind/featur`" in capsys.readouterr().err
    described(tmp_path, {"kind/bug": "type"})
    assert main(argv) == 0
    out = capsys.readouterr()
    assert "each a label of python-poetry/poetry" in out.out and out.err == ""
    assert main(["config", "check"]) == 0  # without a repository, the labels are not checked
    assert "each a label of" not in capsys.readouterr().out
    assert main([*argv, "-R", "o/r"]) == 2
    assert "--snapshot and -R both given" in capsys.readouterr().err


def test_config_check_reads_the_labels_of_a_repository_on_github(tmp_path, capsys, monkeypatch):
    from tests.fakegithub import FakeGitHub
    from tests.fakegithub.fixtures import TOKEN

    monkeypatch.chdir(tmp_path)
    described(tmp_path, {"bug": "type", "area:cli": "area"})
    with FakeGitHub("octo/repo", token=TOKEN) as server:
        monkeypatch.setenv("GITHUB_API_URL", server.base_url)
        monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
        monkeypatch.delenv("GH_TOKEN", raising=False)
        assert main(["config", "check", "-R", "octo/repo", "--json"]) == 0
        report = json.loads(capsys.readouterr().out)
        assert report["repository"] == "octo/repo"
        assert report["warnings"] == [
            "labels.toml: octo/repo has no labels: none of labels.toml's can be learned from "
            "its issues, and an approval creates the ones it applies"
        ]
        server.add_label("bug")
        server.add_label("area:cli-tool")
        assert main(["config", "check", "-R", "octo/repo", "--json"]) == 0
        [warning] = json.loads(capsys.readouterr().out)["warnings"]
        assert "names `area:cli`, a label octo/repo does not have" in warning
        assert "(did you mean `area:cli-tool`?)" in warning
        server.add_label("Area:CLI")  # GitHub compares label names without regard to case
        assert main(["config", "check", "-R", "octo/repo"]) == 0
        assert "each a label of octo/repo" in capsys.readouterr().out
        assert all(p in ("/repos/octo/repo", "/repos/octo/repo/labels") for p in server.paths())


def test_many_labels_of_a_group_without_a_description_are_one_warning():
    labels = LabelsConfig.model_validate(
        {
            "type": [{"name": "bug"}, {"name": "feature", "description": "TODO"}],
            "area": [{"name": f"area/{n}"} for n in "abcde"]
            + [{"name": "area/f", "description": "The f part."}],
        }
    )
    in_labels, _ = weak_spots(labels, Config.model_validate({}))
    assert in_labels == [
        "the type `bug`'s description is empty: the LLM engines tell the types apart by it",
        "the type `feature`'s description is still a placeholder: the LLM engines tell the "
        "types apart by it",
        "5 area labels have no description yet (`area/a`, `area/b`, `area/c`, ...): the LLM "
        "engines read each to decide when the label fits",
    ]
