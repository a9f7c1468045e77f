"""The read-only tools: validated inputs, the point-in-time view, confinement to the checkout."""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from issue_assistant.config.sections import Config
from issue_assistant.errors import UserError
from issue_assistant.learn.learned import Beside
from issue_assistant.moment import Moment
from issue_assistant.tools import TOOLS, Checkout, Toolbox
from issue_assistant.tools.checkout import MAX_FILE_BYTES
from issue_assistant.tools.files import MAX_LISTED, MAX_MATCHES, MAX_READ_LINES
from issue_assistant.tracker.asof import AsOfView
from tests.moments import context_of

SECRET = "TOP-SECRET-VALUE"


@pytest.fixture(scope="module")
def context(hf_snapshot, hf_index, hf_labels):
    view = AsOfView.for_issue(hf_snapshot, 7016)
    return context_of(view, hf_index, hf_labels, Config())


@pytest.fixture
def checkout(tmp_path):
    """A checkout with source, docs, ignored folders, a binary, a big file and symlinks out."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET)
    root = tmp_path / "repo"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "docs").mkdir()
    (root / ".git").mkdir()
    (root / "node_modules" / "dep").mkdir(parents=True)
    (root / "vendor").mkdir()
    (root / "src" / "pkg" / "core.py").write_text(
        "def load(path):\n    raise ValueError('bad path')\n" + "x = 1\n" * 600
    )
    (root / "src" / "pkg" / "util.py").write_text("def helper():\n    return 'load'\n")
    (root / "docs" / "guide.md").write_text("# Guide\n\nCall load() to load.\n")
    (root / ".git" / "config").write_text(f"token = {SECRET}\n")
    (root / "node_modules" / "dep" / "index.js").write_text("function load() {}\n")
    (root / "vendor" / "lib.py").write_text("def load(): pass\n")
    (root / ".gitignore").write_text(".env\n*.log\n")
    (root / ".env").write_text(f"API_KEY={SECRET}\n")
    (root / "run.log").write_text("load failed\n")
    (root / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00load")
    (root / "big.txt").write_text("load\n" * (MAX_FILE_BYTES // 5 + 10))
    os.symlink(outside / "secret.txt", root / "link.txt")
    os.symlink(outside, root / "linkdir")
    os.symlink(root / "src" / "pkg" / "util.py", root / "inside.py")
    return root


@pytest.fixture
def files(context, checkout):
    return Toolbox.for_context(context, checkout)


def call(box: Toolbox, name: str, arguments: object):
    result = box.call(name, arguments)
    return result.is_error, result.text


# ---- the tool set and its schemas -------------------------------------------------------------


def test_every_tool_has_a_strict_object_schema(files):
    names = files.names()
    assert names == ["search_issues", "get_issue", "list_labels", "read_file", "grep", "list_files"]
    specs = {s["name"]: s for s in files.anthropic_specs()}
    for name, spec in specs.items():
        schema = spec["input_schema"]
        assert schema["type"] == "object" and schema["additionalProperties"] is False, name
        assert spec["description"] and "title" not in schema
    assert specs["search_issues"]["input_schema"]["required"] == ["query"]
    assert specs["get_issue"]["input_schema"]["properties"]["number"]["type"] == "integer"
    assert specs["list_labels"]["input_schema"]["properties"] == {}


def test_file_tools_only_with_a_checkout(context):
    box = Toolbox.for_context(context)
    assert box.names() == ["search_issues", "get_issue", "list_labels"]
    bad, text = call(box, "read_file", {"path": "README.md"})
    assert bad and text.startswith("error: unknown tool 'read_file'")


def test_a_tool_can_be_offered_only_where_its_source_allows(context, monkeypatch):
    from issue_assistant.tools.base import tool
    from issue_assistant.tools.issues import NoInput

    monkeypatch.setattr("issue_assistant.tools.base.TOOLS", dict(TOOLS))

    @tool("under_analysis", NoInput, when=lambda box: box.issue is not None)
    def under_analysis(box: Toolbox, args: NoInput) -> str:
        """The issue under analysis."""
        return f"#{box.issue.number}"

    box = Toolbox.for_context(context)
    assert box.names()[-1] == "under_analysis"
    assert box.call("under_analysis", {}).text == f"#{context.issue.number}"
    without = Toolbox(context.moment)  # the MCP server's: no issue under analysis
    assert "under_analysis" not in without.names()
    assert without.call("under_analysis", {}).text.startswith("error: unknown tool")


# ---- issues as of the moment -----------------------------------------------------------------


def numbers(text: str) -> list[int]:
    return [int(line.split()[0][1:]) for line in text.splitlines()]


def test_search_is_as_of_the_moment_and_clamped(context):
    box = Toolbox.for_context(context)
    bad, text = call(box, "search_issues", {"query": "dataset loading error", "limit": 1})
    assert not bad and len(numbers(text)) == 3  # clamped up to 3
    bad, text = call(box, "search_issues", {"query": "dataset loading error", "limit": 500})
    found = numbers(text)
    assert not bad and len(found) == 20  # clamped down to 20
    created = {n: context.tracker.get_issue(n).created_at for n in found}
    assert all(t < context.as_of for t in created.values()) and 7016 not in found
    bad, text = call(box, "search_issues", {"query": "zzqxv"})
    assert not bad and text == "No matching earlier issues."


def test_get_issue_as_it_was(context, hf_snapshot):
    box = Toolbox.for_context(context)
    bad, text = call(box, "get_issue", {"number": 7000})
    issue = context.moment.get_issue(7000, context.issue)
    assert not bad and text.startswith(f"#7000 [{issue.state}")
    assert issue.title[:40] in text
    later = next(i for i in hf_snapshot.all_issues() if i.created_at > context.as_of)
    assert call(box, "get_issue", {"number": later.number}) == (
        True,
        f"error: no earlier issue #{later.number}",
    )
    assert call(box, "get_issue", {"number": 7016}) == (True, "error: no earlier issue #7016")


def test_list_labels(context, hf_labels):
    bad, text = call(Toolbox.for_context(context), "list_labels", {})
    assert not bad and text.startswith("type (at most one):")
    for label in hf_labels.all_names():
        assert f"- {label}" in text


# ---- item 8 of issue 8: bad arguments are answers, not exceptions ----------------------------


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        (
            "search_issues",
            {"query": "x", "limit": "many"},
            "limit: Input should be a valid integer",
        ),
        ("search_issues", {"query": "x", "limit": 2.5}, "limit: Input should be a valid integer"),
        ("search_issues", {"query": ["a", "b"]}, "query: Input should be a valid string"),
        ("search_issues", {}, "query: Field required"),
        ("search_issues", {"query": "x", "sort": "new"}, "sort: Extra inputs are not permitted"),
        ("search_issues", "drop duplicates", "they must be a JSON object"),
        ("search_issues", ["x", 3], "they must be a JSON object"),
        ("get_issue", {"number": "12"}, "number: Input should be a valid integer"),
        ("get_issue", {"number": 0}, "number: Input should be greater than or equal to 1"),
        ("get_issue", {"number": True}, "number: Input should be a valid integer"),
        ("list_labels", {"x": 1}, "x: Extra inputs are not permitted"),
        ("read_file", {"path": 3}, "path: Input should be a valid string"),
        ("grep", {"glob": "*.py"}, "pattern: Field required"),
        ("delete_repo", {}, "unknown tool 'delete_repo'"),
        (None, {}, "unknown tool None"),
    ],
)
def test_bad_arguments_are_error_results(files, name, arguments, expected):
    bad, text = call(files, name, arguments)
    assert bad and text.startswith("error: ")
    assert expected in text


def _json():
    scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30)
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
        max_leaves=12,
    )


def _arguments():
    keys = st.sampled_from(["query", "limit", "number", "path", "start", "end", "pattern", "glob"])
    return st.dictionaries(keys, _json(), max_size=4) | _json()


def _tree(root) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_any_json_gets_an_answer(files, checkout, record_property):
    """Generated tool names and JSON arguments: every call gets a text answer, none raises, and
    nothing in (or beside) the checkout changes."""
    counts = {"cases": 0, "tracebacks": 0}
    before = _tree(checkout.parent)

    @settings(max_examples=300, deadline=None)
    @given(name=st.sampled_from([*TOOLS, "nope", ""]), arguments=_arguments())
    def check(name: str, arguments: object) -> None:
        counts["cases"] += 1
        try:
            result = files.call(name, arguments)
        except Exception:
            counts["tracebacks"] += 1
            raise
        assert isinstance(result.text, str) and result.text
        assert SECRET not in result.text

    check()
    after = _tree(checkout.parent)
    changed = sum(before.get(p) != after.get(p) for p in set(before) | set(after))
    assert counts["cases"] >= 300 and counts["tracebacks"] == 0 and changed == 0
    record_property(
        "reliability",
        json.dumps(
            {
                "category": "generated",
                "cases": counts["cases"],
                "wrong_writes": changed,
                "doubled_writes": 0,
                "tracebacks": counts["tracebacks"],
            }
        ),
    )


# ---- files: confined to the checkout ---------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("../outside/secret.txt", "'..' is not allowed"),
        ("src/../../outside/secret.txt", "'..' is not allowed"),
        ("/etc/passwd", "only paths relative"),
        ("~/.ssh/id_rsa", "only paths relative"),
        ("C:/Windows/win.ini", "only paths relative"),
        ("src\\pkg\\core.py", "only paths relative"),
        ("link.txt", "leads outside the checkout"),
        ("linkdir/secret.txt", "leads outside the checkout"),
        (".git/config", "ignored"),
        ("node_modules/dep/index.js", "ignored"),
        (".env", "ignored"),
        ("logo.png", "binary"),
        ("big.txt", "larger than"),
        ("src/missing.py", "no such file"),
        ("src", "a folder"),
        ("", "give a file path"),
        ("a\x00b", "give a file path"),
    ],
)
def test_read_file_refuses(files, path, why):
    bad, text = call(files, "read_file", {"path": path})
    assert bad and why in text and SECRET not in text


def test_read_file_lines(files):
    bad, text = call(files, "read_file", {"path": "./src/pkg/core.py", "start": 2, "end": 3})
    assert not bad
    assert text.splitlines() == [
        "src/pkg/core.py: lines 2-3 of 602",
        "    2|     raise ValueError('bad path')",
        "    3| x = 1",
        "(more from line 4)",
    ]
    bad, text = call(files, "read_file", {"path": "src/pkg/core.py"})
    assert f"lines 1-{MAX_READ_LINES} of 602" in text
    assert text.endswith(f"(more from line {MAX_READ_LINES + 1})")
    assert call(files, "read_file", {"path": "inside.py"})[1].startswith("inside.py: lines 1-2")
    assert call(files, "read_file", {"path": "src/pkg/core.py", "start": 700}) == (
        True,
        "error: src/pkg/core.py has only 602 lines",
    )
    bad, text = call(files, "read_file", {"path": "src/pkg/core.py", "start": 5, "end": 2})
    assert bad and "before start" in text


def test_list_files_skips_ignored_and_escapes(files):
    bad, text = call(files, "list_files", {})
    assert not bad
    assert text.splitlines() == [
        ".gitignore",
        "big.txt",
        "inside.py",
        "logo.png",
        "docs/guide.md",
        "src/pkg/core.py",
        "src/pkg/util.py",
    ]
    assert call(files, "list_files", {"glob": "*.py"})[1].splitlines() == [
        "inside.py",
        "src/pkg/core.py",
        "src/pkg/util.py",
    ]
    assert call(files, "list_files", {"glob": "src/*.py"})[1] == "No files match src/*.py."
    assert call(files, "list_files", {"glob": "docs/**"})[1] == "docs/guide.md"
    assert call(files, "list_files", {"glob": "../*"})[0]


def test_list_files_is_capped(tmp_path, context):
    for i in range(MAX_LISTED + 5):
        (tmp_path / f"f{i:04d}.txt").write_text("x")
    text = Toolbox.for_context(context, tmp_path).call("list_files", {}).text
    assert len(text.splitlines()) == MAX_LISTED + 1 and text.endswith(
        "... and 5 more; narrow the glob."
    )


def test_grep(files):
    bad, text = call(files, "grep", {"pattern": r"\bload\b"})
    assert not bad
    assert text.splitlines() == [
        "inside.py:2: return 'load'",
        "docs/guide.md:3: Call load() to load.",
        "src/pkg/core.py:1: def load(path):",
        "src/pkg/util.py:2: return 'load'",
        "4 matches in 4 files.",
    ]  # not in .git, node_modules, vendor, .env, run.log, the binary, the big file or links out
    bad, text = call(files, "grep", {"pattern": "(?i)VALUEERROR", "glob": "src/**"})
    assert text.splitlines()[0] == "src/pkg/core.py:2: raise ValueError('bad path')"
    assert call(files, "grep", {"pattern": "nowhere-at-all"}) == (False, "No matches.")
    bad, text = call(files, "grep", {"pattern": "x = 1"})
    assert len(text.splitlines()) == MAX_MATCHES + 1 and "stopped at 50" in text
    bad, text = call(files, "grep", {"pattern": "(unclosed"})
    assert bad and text.startswith("error: not a valid regular expression")


def test_grep_guards_against_catastrophic_patterns(tmp_path, context):
    (tmp_path / "a.txt").write_text("a" * 60 + "b\n")
    bad, text = call(Toolbox.for_context(context, tmp_path), "grep", {"pattern": "(a|aa)+$"})
    assert bad and "takes too long" in text


def test_checkout_must_exist(tmp_path):
    with pytest.raises(UserError, match="no such checkout directory"):
        Checkout(tmp_path / "missing")


def test_repo_view_without_an_issue(hf_snapshot, hf_index, hf_labels, context):
    view = AsOfView(hf_snapshot, context.as_of)
    box = Toolbox(Moment.build(view, hf_index, hf_labels, Beside(), as_of=context.as_of))
    found = numbers(box.call("search_issues", {"query": "dataset loading error"}).text)
    assert found and all(hf_snapshot.get_issue(n).created_at < context.as_of for n in found)
    assert not box.call("get_issue", {"number": 7000}).is_error
    assert not box.call("get_issue", {"number": 7016}).is_error  # no issue under analysis
    later = next(i for i in hf_snapshot.all_issues() if i.created_at > context.as_of)
    assert box.call("get_issue", {"number": later.number}).is_error
