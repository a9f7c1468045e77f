"""Likely files: each signal, their combination, and the comment showing files only where the
measured precision allows, with their reasons (on the synthetic `tinyparse` data)."""

from __future__ import annotations

from pathlib import Path

import pytest

from issue_assistant.errors import UserError
from issue_assistant.likely.code import CodeIndex
from issue_assistant.likely.fix_history import FixHistory, PastFix
from issue_assistant.likely.rank import (
    STANDINGS,
    LikelyCalibration,
    Weights,
    all_hints,
    combine,
    likely_files,
    load_calibration,
)
from issue_assistant.likely.signals import errors, frames, message_fragments, paths
from tests import contextdata as data
from tests.contextdata import (
    day,
    tinyparse_checkout,  # noqa: F401 (the checkout fixture)
)
from tests.test_context_repo import config_for, run


@pytest.fixture(scope="module")
def code(checkout: Path) -> CodeIndex:
    return CodeIndex(checkout)


def calibration(tmp_path: Path, precision: dict[str, float]) -> Path:
    lines = ["source = 'a test'", "kinds = ['source']", "[weights]", "[precision]"]
    lines += [f'"{k}" = {v}' for k, v in precision.items()]
    path = tmp_path / f"cal-{len(list(tmp_path.iterdir()))}.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


CACHE = "src/tinyparse/cache.py"
TRACE = (
    "Traceback (most recent call last):\n"
    '  File "/home/me/app.py", line 3, in main\n'
    '  File "/venv/lib/python3.11/site-packages/tinyparse/cache.py", line 7, in __init__\n'
    '  File "/venv/lib/python3.11/site-packages/tinyparse/parser.py", line 6, in parse_tokens\n'
    "IndexError: list index out of range\n"
)


def test_frames_innermost_first_with_line_and_function(code: CodeIndex) -> None:
    got = frames(code, TRACE)
    assert [(h.path, h.line, h.function) for h in got] == [
        ("src/tinyparse/parser.py", 6, "parse_tokens"),
        ("src/tinyparse/cache.py", 7, "__init__"),
    ]
    assert got[0].score > got[1].score and "in `parse_tokens`" in got[0].detail


def test_dotnet_frames_name_their_files_innermost_first(tmp_path: Path) -> None:
    for rel in ("src/App/Program.cs", "src/App/Store.cs", "src/Other/Program.cs"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("class X { }\n")
    trace = (
        "System.NullReferenceException: Object reference not set to an instance of an object.\n"
        "   at App.Store.Load(String key) in C:\\build\\src\\App\\Store.cs:line 42\n"
        "   at App.Program.Main(String[] args) in /build/src/App/Program.cs:line 7\n"
    )
    got = frames(CodeIndex(tmp_path), trace)
    assert [(h.path, h.line) for h in got] == [("src/App/Store.cs", 42), ("src/App/Program.cs", 7)]


def test_paths_modules_and_file_names(code: CodeIndex) -> None:
    text = "See tinyparse.cache.CacheStore and lexer.py; also docs/cache.md. Not e.g. foo.bar"
    got = {h.path: h.detail for h in paths(code, text)}
    assert got == {
        "docs/cache.md": "`docs/cache.md` named",
        "src/tinyparse/cache.py": "module `tinyparse.cache`",
        "src/tinyparse/lexer.py": "`lexer.py` named",
    }


def test_error_messages_are_found_by_their_literal_parts(code: CodeIndex) -> None:
    assert message_fragments("ValueError: Couldn't find file at 'x/y.csv' (404)") == [
        ("ValueError", "Couldn't find file at")
    ]
    text = "KeyError: an empty stream has no first token\n"
    got = errors(code, text)
    assert [h.path for h in got] == ["src/tinyparse/parser.py"]
    assert got[0].line == 6 and "an empty stream has no first token" in got[0].detail
    assert errors(code, "ValueError: nothing like this anywhere in the code") == []


def test_history_votes_only_for_fixes_known_before_the_moment(code: CodeIndex) -> None:
    history = FixHistory(
        [
            PastFix(
                3, "Cache directory is ignored", "cache_dir", day(13), ("src/tinyparse/cache.py",)
            ),
            PastFix(8, "Cache directory again", "cache_dir", day(50), ("src/tinyparse/lexer.py",)),
        ]
    )
    got = history.hints(code, "The cache directory setting", "cache_dir is ignored", day(35))
    assert [(h.path, h.detail) for h in got] == [("src/tinyparse/cache.py", "changed to fix #3")]
    assert [h.path for h in history.prior(code, day(35))] == ["src/tinyparse/cache.py"]
    assert history.hints(code, "cache", "", day(10)) == []  # nothing fixed yet


def test_combine_puts_named_files_first_and_weighs_the_rest(code: CodeIndex) -> None:
    hints = all_hints(code, "CacheStore crashes", TRACE)
    ranked = combine(hints, Weights())
    assert ranked[0].path == "src/tinyparse/parser.py" and ranked[0].evidence() == "frame"
    words_only = combine(hints, Weights(frame=0, path=0, error=0))
    assert "frame" not in words_only[0].by
    only = combine(hints, Weights(), keep=["src/tinyparse/lexer.py"])
    assert [r.path for r in only] == ["src/tinyparse/lexer.py"]
    assert combine(hints, Weights(), keep=["nowhere.py"]) == []


def test_likely_files_carry_reasons_and_the_measured_precision(tmp_path: Path, code) -> None:
    first = {"first-clear": 0.8, "first-close": 0.8, "second": 0.2}
    cal = load_calibration(calibration(tmp_path, first))
    got = likely_files(code, "Crash", TRACE, calibration=cal, limit=3)
    assert got[0].path == "src/tinyparse/parser.py" and got[0].confidence == 0.8
    assert got[1].confidence == 0.2 and got[1].standing == "a file ranked second"
    assert got[0].why[0] == "stack frame: line 6, in `parse_tokens`"
    assert got[0].function == "parse_tokens"
    assert all(f.path.startswith("src/") for f in got)  # tests and docs are not ranked
    assert likely_files(code, "", "", calibration=LikelyCalibration()) == []


def test_a_bad_calibration_file_names_what_is_wrong(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[weights]\nframes = 2\n")
    with pytest.raises(UserError, match="unknown weight 'frames'"):
        load_calibration(bad)
    bad.write_text('[precision]\n"first-clear" = 1.5\n')
    with pytest.raises(UserError, match="first-clear must be a number from 0 to 1"):
        load_calibration(bad)
    bad.write_text('[precision]\n"frame@1" = 0.5\n')
    with pytest.raises(UserError, match="unknown standing 'frame@1'"):
        load_calibration(bad)


def test_the_comment_shows_files_only_above_the_precision(tmp_path, checkout) -> None:
    sure = calibration(tmp_path, {"first-clear": 0.8, "first-close": 0.8})
    analysis = run(data.snapshot(), 1, config_for(checkout, calibration=str(sure)), tmp_path / "a")
    files = analysis.plan.likely_files
    assert [(f.path, f.line, f.confidence) for f in files] == [("src/tinyparse/parser.py", 12, 0.8)]
    sha = analysis.context.code.sha
    link = f"https://github.com/octo/tinyparse/blob/{sha}/src/tinyparse/parser.py#L12"
    assert f"[`src/tinyparse/parser.py:12`]({link}): stack frame: line 12, in" in analysis.comment
    assert "(right 80% of the time for a file ranked first by a" in analysis.comment
    # the same file, measured right only 30% of the time: not in the comment, still in files.md
    unsure = calibration(tmp_path, {"first-clear": 0.3, "first-close": 0.3})
    config = config_for(checkout, calibration=str(unsure))
    quiet = run(data.snapshot(), 1, config, tmp_path / "b")
    assert quiet.plan.likely_files == [] and "Likely files" not in quiet.comment
    assert "| `src/tinyparse/parser.py` | 12 | stack frame" in quiet.context.files()["files.md"]
    assert "| 0.30 |" in quiet.context.files()["files.md"]
    # a lower bar shows it again
    config = config_for(checkout, calibration=str(unsure), min_precision=0.25)
    assert run(data.snapshot(), 1, config, tmp_path / "c").plan.likely_files


def test_never_more_than_five_in_the_comment(tmp_path) -> None:
    root = data.checkout(tmp_path / "many", git=False)
    for i in range(8):
        (root / "src" / "tinyparse" / f"store{i}.py").write_text(
            f'"""Cache directory helpers {i}."""\n\n\ndef cache_dir_{i}():\n    return "~"\n'
        )
    every = {s: 0.9 for s in STANDINGS}
    config = config_for(root, calibration=str(calibration(tmp_path, every)), likely_files=10)
    analysis = run(data.snapshot(), 5, config, tmp_path / "d")
    assert len(analysis.context.likely_files) >= 8
    assert len(analysis.plan.likely_files) == 5
    assert analysis.comment.count("(right 90% of the time for a file ranked") == 5
