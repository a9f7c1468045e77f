from pathlib import Path

import pytest

from issue_assistant.cli import main
from issue_assistant.config import Config, load_config, load_labels
from issue_assistant.errors import UserError

GOOD_LABELS = """
needs_info = "needs info"

[[type]]
name = "bug"
description = "broken"

  [[type.ask]]
  what = "version"
  question = "Which version?"
  detect = ['\\d+\\.\\d+']

[[area]]
name = "cli"
description = "the command line"
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def test_shipped_examples_are_valid(project_labels, project_config):
    assert project_labels.group_of("bug") == "type"
    assert project_labels.needs_info == "needs info"
    assert "P3" not in project_labels.proposable("priority")
    assert project_config.engine.name == "similar"


def test_good_labels(tmp_path):
    labels = load_labels(write(tmp_path, "labels.toml", GOOD_LABELS))
    bug = labels.type_label("bug")
    assert bug is not None and bug.ask[0].present_in("running 1.2 here")
    assert not bug.ask[0].present_in("no numbers")
    assert labels.limit("area") == 3 and labels.limit("type") == 1


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            GOOD_LABELS + '\n[[area]]\nname = "x"\ncolour = "red"\n',
            r"labels.toml:19: area.1.colour: unknown key",
        ),
        (
            GOOD_LABELS.replace('needs_info = "needs info"', "max_areas = 'two'"),
            r"labels.toml:2: max_areas",
        ),
        (
            GOOD_LABELS + '\n[[area]]\nname = "cli"\n',
            r"labels.toml:18: area.1.name: label 'cli' is twice in area",
        ),
        (
            GOOD_LABELS + '\n[[topic]]\nname = "bug"\n',
            r"labels.toml:18: topic.0.name: label 'bug' is in both type and topic",
        ),
        (
            GOOD_LABELS.replace("'\\d+\\.\\d+'", "'(unclosed'"),
            r"labels.toml:11: type.0.ask.0.detect: .*bad regular expression",
        ),
        (
            GOOD_LABELS + "\n[[type]]\ndescription = 'no name'\n",
            r"labels.toml:17: type.1.name: Field required",
        ),
        ("[[type]\nname=1", r"labels.toml: not valid TOML"),
    ],
)
def test_label_errors_name_file_line_and_key(tmp_path, text, expected):
    path = write(tmp_path, "labels.toml", text)
    with pytest.raises(UserError, match=expected):
        load_labels(path)


def test_config_defaults_and_errors(tmp_path):
    assert load_config(None) == Config()
    path = write(tmp_path, "config.toml", '[engine]\nname = "similar"\nturns = 3\n')
    with pytest.raises(UserError, match=r"config.toml:3: engine.turns: unknown key"):
        load_config(path)
    path = write(tmp_path, "config.toml", "[duplicates]\nthreshold = 2.0\n")
    with pytest.raises(
        UserError, match=r"config.toml:2: duplicates.threshold: Input should be less"
    ):
        load_config(path)
    path = write(tmp_path, "config.toml", '[approval]\nwrites = "sometimes"\n')
    with pytest.raises(UserError, match=r"config.toml:2: approval.writes"):
        load_config(path)


def test_multiline_strings_do_not_confuse_line_numbers(tmp_path):
    text = '[project]\ndescription = """\nname = 1\n"""\n[engine]\nmodle = "x"\n'
    with pytest.raises(UserError, match=r"config.toml:6: engine.modle: unknown key"):
        load_config(write(tmp_path, "config.toml", text))


def test_config_check_command(tmp_path, capsys, monkeypatch):
    labels = write(tmp_path, "labels.toml", GOOD_LABELS)
    assert main(["config", "check", "--labels", str(labels)]) == 0
    assert "ok: labels (1 type, 1 area" in capsys.readouterr().out
    bad = write(tmp_path, "bad.toml", GOOD_LABELS + "unknown = 1\n")
    assert main(["config", "check", "--labels", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "bad.toml:16: area.0.unknown: unknown key" in err[0]


def test_default_lookup_prefers_root_then_github_dir(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["config", "check"]) == 2
    assert "no labels.toml" in capsys.readouterr().err
    (tmp_path / ".github").mkdir()
    write(tmp_path / ".github", "labels.toml", GOOD_LABELS)
    assert main(["config", "check"]) == 0
