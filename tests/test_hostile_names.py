"""Names from the checkout are data (issue 27): a file name with a control character is never
indexed (and is counted), and every path shown in a comment or a context file is one code span
that no character can end. Recorded for `docs/reliability.md`.
"""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from issue_assistant.comment import Plan, render_comment
from issue_assistant.decision import FileLink
from issue_assistant.likely.code import CodeIndex
from issue_assistant.render import render
from issue_assistant.sanitize import path_span, visible
from tests.test_races_faults import record

PROPERTY = "reliability"  # what each case records for tests/reliability.py

HOSTILE = "solver\n\n@octocat <img src=x onerror=alert(1)> [pwn](https://evil.example) x.py"
ON_DISK = "solver\n\n@octocat <img src=x onerror=alert(1)> [pwn](javascript:alert(1)) x.py"
REPO = "octo/repo"
MD = MarkdownIt("commonmark").enable("table")


def live_parts(markdown: str) -> list[str]:
    """What in rendered Markdown is live (not text): raw HTML, links and images outside the
    repository, and mentions outside code."""
    found = []
    for block in MD.parse(markdown):
        if block.type == "html_block" and not block.content.startswith("<!--"):
            found.append(block.content)
        for t in block.children or []:
            if t.type == "html_inline":
                found.append(t.content)
            if t.type in ("link_open", "image"):
                href = str(t.attrGet("href") or t.attrGet("src") or "")
                if not href.startswith(f"https://github.com/{REPO}/"):
                    found.append(href)
            if t.type == "text" and "@octocat" in t.content:
                found.append(t.content)
    return found


def test_a_hostile_file_name_is_not_indexed_and_is_counted(tmp_path, caplog, record_property):
    root = tmp_path / "checkout"
    root.mkdir()
    (root / ON_DISK).write_text("def solve():\n    raise SolverError('no solution')\n")
    (root / "solver.py").write_text("def solve():\n    raise SolverError('no solution')\n")
    (root / "tab\there.py").write_text("x = 1\n")
    code = CodeIndex(root)
    kept = list(code.files)
    found = [f.path for f in code.likely_files("SolverError: no solution in solve")]
    leaked = sum(ON_DISK in p for p in kept + found)
    record(record_property, "text", 0, 0, 0, leaks=leaked, kind="file name", where="code index")
    assert kept == ["solver.py"] and code.skipped_names == 2
    assert "solver.py" in found and leaked == 0
    assert any("control character" in r.getMessage() for r in caplog.records)


def _plan(path: str) -> Plan:
    return Plan(
        repository=REPO,
        issue=7,
        reporter="alice",
        created_at=datetime(2025, 1, 1, tzinfo=UTC),
        type="bug",
        engine="fake",
        likely_files=[
            FileLink(path=path, line=3),
            FileLink(path=path, line=4, url=f"https://github.com/{REPO}/blob/abc/x.py#L4"),
        ],
    )


def test_a_hostile_path_in_the_comment_stays_one_code_span(record_property):
    body = render_comment(_plan(HOSTILE))
    ours = live_parts(render_comment(_plan("src/solver.py")))  # the comment's own markup
    live = [p for p in live_parts(body) if p not in ours]
    record(record_property, "text", 0, 0, 0, leaks=len(live), kind="file name", where="comment")
    assert live == []
    assert visible(HOSTILE) in body


def test_a_hostile_path_in_files_md_stays_one_code_span(record_property):
    ctx = SimpleNamespace(
        code=SimpleNamespace(sha="abc"),
        likely_files=[SimpleNamespace(path=HOSTILE, line=2, why=("named",), confidence=0.5)],
    )
    text = render("context/files.md.j2", ctx=ctx)
    live = live_parts(text)
    record(record_property, "text", 0, 0, 0, leaks=len(live), kind="file name", where="files.md")
    assert live == [] and len([ln for ln in text.splitlines() if ln.startswith("| ")]) == 3


@settings(max_examples=300, deadline=None)
@given(st.text(min_size=1, max_size=80))
def test_any_name_is_one_code_span_in_a_paragraph_and_a_table(name):
    para = MD.parse(f"see {path_span(name)} here")
    [inline] = [t for t in para if t.type == "inline"]
    kinds = [c.type for c in inline.children]
    assert kinds == ["text", "code_inline", "text"], (name, kinds)
    assert inline.children[1].content.strip() == visible(name).strip()
    table = MD.parse(f"| a | b |\n| --- | --- |\n| {path_span(name, table=True)} | x |\n")
    cells = [t for t in table if t.type == "inline"]
    assert len(cells) == 4 and cells[3].content == "x"
    assert [c.type for c in cells[2].children] == ["code_inline"]


def test_the_file_link_url_keeps_the_name_inside_the_link(record_property):
    from issue_assistant.likely.code import LikelyFile

    url = LikelyFile(path=HOSTILE, score=1.0, line=2).url(REPO, "abc")
    assert url is not None and url.startswith(f"https://github.com/{REPO}/blob/abc/")
    assert not any(c in url for c in " \n<>()[]")
    body = f"[{path_span(HOSTILE)}]({url})"
    assert live_parts(body) == []


@settings(max_examples=150, deadline=None)
@given(st.text(min_size=1, max_size=120))
def test_any_name_in_the_comment_adds_nothing_live(name):
    ours = live_parts(render_comment(_plan("src/solver.py")))
    body = render_comment(_plan(name))
    assert [p for p in live_parts(body) if p not in ours] == []
    spans = [
        c.content
        for t in MD.parse(body)
        if t.type == "inline"
        for c in t.children or []
        if c.type == "code_inline"
    ]
    shown = visible(name)
    plain, linked = f"{shown}:3", f"{shown}:4".replace("]", "\\x5d")
    assert sum(s.strip() in (plain.strip(), linked.strip()) for s in spans) == 2, spans


@pytest.mark.parametrize("name", ["src/a]", 'x]: https://evil.example "t"'])
def test_a_name_that_would_make_a_link_reference_definition_stays_a_link(name, record_property):
    """`[`a]:4`](...)` at a line's start reads as a link reference definition (the line
    vanishes): the `]` is shown escaped so the file's link stays a link."""
    body = render_comment(_plan(name))
    tokens = [c for t in MD.parse(body) if t.type == "inline" for c in t.children or []]
    links = [str(c.attrGet("href")) for c in tokens if c.type == "link_open"]
    live = [p for p in live_parts(body) if "evil" in p]
    record(record_property, "text", 0, 0, 0, leaks=len(live), kind="file name", where="file link")
    assert live == [] and links == [f"https://github.com/{REPO}/blob/abc/x.py#L4"]
