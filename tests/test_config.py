import re
from pathlib import Path

import pytest

from issue_assistant.cli import main
from issue_assistant.config.labels import load_labels
from issue_assistant.config.sections import Config, load_config
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
            GOOD_LABELS + '\n[[area]]\nname = "CLI"\n',
            r"labels.toml:18: area.1.name: label 'CLI' is twice in area \(as 'cli': GitHub",
        ),
        (
            GOOD_LABELS + '\n[[priority]]\nname = "Bug"\n',
            r"labels.toml:18: priority.0.name: label 'Bug' is in both type and priority",
        ),
        (
            GOOD_LABELS.replace('needs_info = "needs info"', 'needs_info = "CLI"'),
            r"labels.toml:\d+: needs_info: 'CLI' is also an area label",
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


def test_a_file_that_is_not_utf8_or_a_folder_is_named_in_a_clear_error(tmp_path):
    bad = tmp_path / "config.toml"
    bad.write_bytes(b"\xff\xfe[engine]\n")
    with pytest.raises(UserError, match=r"config.toml:1: not UTF-8 text, as TOML must be"):
        load_config(bad)
    labels = tmp_path / "labels.toml"
    labels.write_bytes('[[type]]\nname = "bug"\ndescription = "caf\u00e9"\n'.encode("latin-1"))
    with pytest.raises(UserError, match=r"labels.toml:3: not UTF-8 text"):
        load_labels(labels)
    assert main(["config", "check", "--labels", str(tmp_path)]) == 2


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


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '[duplicates]\nclose = "yes"\n',
            r"config.toml:2: duplicates.close: Input should be a valid boolean",
        ),
        ("[engine]\ntimeout_seconds = inf\n", r"config.toml:2: engine.timeout_seconds: .*finite"),
        ("[engine]\nbudget_usd = nan\n", r"config.toml:2: engine.budget_usd: .*finite"),
        ('[engine]\nmax_turns = "8"\n', r"config.toml:2: engine.max_turns: .*valid integer"),
        (
            '[engine]\nfallback = "nope"\n',
            r"config.toml:2: engine.fallback: .*unknown engine 'nope'",
        ),
        ('[engine]\nname = "nope"\n', r"config.toml:2: engine.name: .*unknown engine 'nope'"),
        (
            '[approval]\nroles = ["maintainer"]\n',
            r"config.toml:2: approval.roles.0: Input should be",
        ),
        (
            '[approval]\nbot_login = ""\n',
            r"config.toml:2: approval.bot_login: .*not a GitHub login",
        ),
        ('[approval]\nbot_login = "two words"\n', r"approval.bot_login: .*not a GitHub login"),
        ('[approval]\npending_label = "a, b"\n', r"config.toml:2: approval.pending_label: .*comma"),
        ('[approval]\nopt_out_label = "  "\n', r"config.toml:2: approval.opt_out_label: .*blank"),
        (
            '[approval]\npending_label = "' + "x" * 51 + '"\n',
            r"approval.pending_label: .*at most 50",
        ),
    ],
)
def test_config_values_are_checked_not_coerced(tmp_path, text, expected):
    with pytest.raises(UserError, match=expected):
        load_config(write(tmp_path, "config.toml", text))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            GOOD_LABELS.replace('needs_info = "needs info"', 'max_areas = "2"'),
            r"labels.toml:2: max_areas: .*valid integer",
        ),
        (GOOD_LABELS + 'propose = "no"\n', r"labels.toml:16: area.0.propose: .*valid boolean"),
        (GOOD_LABELS + '\n[[topic]]\nname = "a,b"\n', r"labels.toml:18: topic.0.name: .*comma"),
        (GOOD_LABELS + '\n[[topic]]\nname = ""\n', r"labels.toml:18: topic.0.name: .*blank"),
        (
            GOOD_LABELS.replace('"needs info"', '"needs, info"'),
            r"labels.toml:2: needs_info: .*comma",
        ),
    ],
)
def test_label_values_are_checked_not_coerced(tmp_path, text, expected):
    with pytest.raises(UserError, match=expected):
        load_labels(write(tmp_path, "labels.toml", text))


def test_label_names_may_hold_emoji_colons_and_spaces(tmp_path):
    text = GOOD_LABELS + '\n[[topic]]\nname = "🐛 kind: crash"\n'
    assert load_labels(write(tmp_path, "labels.toml", text)).group_of("🐛 kind: crash") == "topic"


def test_config_check_fails_where_analyze_would(tmp_path, capsys, monkeypatch):
    from issue_assistant import engine_registry as registry

    labels = write(tmp_path, "labels.toml", GOOD_LABELS)
    for text in ('[engine]\nfallback = "nope"\n', '[duplicates]\nclose = "yes"\n'):
        config = write(tmp_path, "config.toml", text)
        assert main(["config", "check", "--labels", str(labels), "--config", str(config)]) == 2
        assert "config.toml:2:" in capsys.readouterr().err
    # An engine that is known by name but whose module does not import.
    monkeypatch.setitem(registry.BUILTINS, "broken", "issue_assistant.engines.no_such_module")
    config = write(tmp_path, "config.toml", '[engine]\nname = "broken"\n')
    assert main(["config", "check", "--labels", str(labels), "--config", str(config)]) == 2
    assert "engine 'broken' or 'similar' cannot be loaded" in capsys.readouterr().err


HUGO = 'baseURL = "https://example.org/"\ntitle = "My site"\n[params]\nauthor = "me"\n'


def test_lookup_order_github_issue_assistant_then_github_then_an_own_root_file(tmp_path):
    """Issue 17 item 5: `.github/issue-assistant/`, then `.github/`, as labeler and
    release-drafter read `.github/`; a root file only when it is ours."""
    from issue_assistant.config.files import find_file

    write(tmp_path, "config.toml", '[engine]\nname = "similar"\n')
    assert find_file("config.toml", None, tmp_path) == tmp_path / "config.toml"
    (tmp_path / ".github" / "issue-assistant").mkdir(parents=True)
    write(tmp_path / ".github", "config.toml", "[index]\nembeddings = false\n")
    assert find_file("config.toml", None, tmp_path) == tmp_path / ".github" / "config.toml"
    write(tmp_path / ".github" / "issue-assistant", "config.toml", "")
    found = find_file("config.toml", None, tmp_path)
    assert found == tmp_path / ".github" / "issue-assistant" / "config.toml"


def test_another_tools_root_config_toml_is_not_read(tmp_path, monkeypatch, capsys):
    """A Hugo site's config.toml used to win over .github/config.toml (`baseURL: unknown key`)."""
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "config.toml", HUGO)
    write(tmp_path, "labels.toml", GOOD_LABELS)
    assert main(["config", "check"]) == 0  # the defaults: Hugo's file is not ours
    (tmp_path / ".github").mkdir()
    write(tmp_path / ".github", "config.toml", '[engine]\nname = "nope"\n')
    assert main(["config", "check"]) == 2  # .github/config.toml is the one read
    assert ".github/config.toml:2: engine.name: unknown engine 'nope'" in capsys.readouterr().err


def test_a_root_file_with_one_of_our_keys_is_ours_and_checked(tmp_path):
    from issue_assistant.config.files import load_both

    write(tmp_path, "labels.toml", GOOD_LABELS)
    write(tmp_path, "config.toml", '[engine]\nname = "similar"\nbaseURL = "x"\n')
    with pytest.raises(UserError, match=r"config.toml:3: engine.baseURL: unknown key"):
        load_both(None, None, tmp_path)


def test_no_labels_toml_but_another_tools_names_it(tmp_path):
    from issue_assistant.config.files import load_both

    write(tmp_path, "labels.toml", '[[labels]]\nname = "bug"\ncolor = "d73a4a"\n')
    with pytest.raises(UserError) as err:
        load_both(None, None, tmp_path)
    message = str(err.value)
    assert "no labels.toml in .github/issue-assistant/, .github/ or the repository root" in message
    assert "labels.toml is another tool's" in message


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            # the misspelt key is named (before the "Field required" it causes), with a guess
            GOOD_LABELS.replace("question =", "questoin ="),
            "labels.toml:10: type.0.ask.0.questoin: unknown key (did you mean 'question'?)",
        ),
        (
            GOOD_LABELS + '\n[[area]]\nname = "io"\ndescripton = "x"\n',
            "labels.toml:19: area.1.descripton: unknown key (did you mean 'description'?)",
        ),
        (
            "maxareas = 2\n" + GOOD_LABELS,
            "labels.toml:1: maxareas: unknown key (did you mean 'max_areas'?)",
        ),
        (GOOD_LABELS + "zzz = 2\n", "zzz: unknown key"),
    ],
)
def test_unknown_keys_in_array_tables_are_named_with_a_guess(tmp_path, text, expected):
    with pytest.raises(UserError) as err:
        load_labels(write(tmp_path, "labels.toml", text))
    assert expected in str(err.value)
    assert "did you mean" in expected or "did you mean" not in str(err.value)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '[engine]\nfalback = "similar"\n',
            "engine.falback: unknown key (did you mean 'fallback'?)",
        ),
        ("[engines.similar]\nneighbours = 3\n", "did you mean 'neighbors'?"),
    ],
)
def test_unknown_config_keys_get_a_guess(tmp_path, text, expected):
    with pytest.raises(UserError, match=re.escape(expected)):
        load_config(write(tmp_path, "config.toml", text))


def test_no_value_error_prefix(tmp_path):
    text = GOOD_LABELS.replace("'\\d+\\.\\d+'", "'(unclosed'")
    with pytest.raises(UserError) as err:
        load_labels(write(tmp_path, "labels.toml", text))
    assert "Value error" not in str(err.value) and "bad regular expression" in str(err.value)


def test_every_error_of_a_file_is_said_in_one_line(tmp_path):
    """The misspelt key first (with file:line), then the file's other errors by line; the
    "Field required" a misspelling causes is not said; past `MORE_ERRORS`, a count."""
    from issue_assistant.config.strict import MORE_ERRORS

    text = GOOD_LABELS.replace("question =", "questoin =").replace(
        'description = "the command line"', "description = 3\nmax_areas = 1"
    )
    with pytest.raises(UserError) as err:
        load_labels(write(tmp_path, "labels.toml", text))
    message = str(err.value)
    assert message.endswith(
        "labels.toml:10: type.0.ask.0.questoin: unknown key (did you mean 'question'?); "
        "line 15: area.0.description: Input should be a valid string; "
        "line 16: area.0.max_areas: unknown key"
    )
    assert "question: Field required" not in message and "\n" not in message
    many = "".join("[engine]\n" if i == 0 else f"k{i} = 1\n" for i in range(MORE_ERRORS + 3))
    with pytest.raises(UserError) as err:
        load_config(write(tmp_path, "config.toml", many))
    assert "config.toml:2: engine.k1: unknown key; line 3: engine.k2" in str(err.value)
    assert str(err.value).endswith(
        f"line {MORE_ERRORS + 2}: engine.k{MORE_ERRORS + 1}: unknown key; 1 more"
    )


def test_config_check_says_what_is_wrong_in_both_files(tmp_path, capsys):
    labels = write(tmp_path, "labels.toml", GOOD_LABELS + "unknown = 1\n")
    config = write(tmp_path, "config.toml", '[engine]\nmax_turns = "5"\n')
    assert main(["config", "check", "--labels", str(labels), "--config", str(config)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2
    assert "labels.toml:16: area.0.unknown: unknown key" in err[0]
    assert "config.toml:2: engine.max_turns: Input should be a valid integer" in err[1]
    # one wrong file: its error once
    good = write(tmp_path, "good.toml", GOOD_LABELS)
    assert main(["config", "check", "--labels", str(good), "--config", str(config)]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
