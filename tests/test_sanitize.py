"""The sanitizer against the escapes found under attack (issue 8, item 5), and URL normalisation."""

from __future__ import annotations

import pytest

from issue_assistant.sanitize import LINK_REMOVED, sanitize
from issue_assistant.urls import canonical_url
from tests.markdown_check import problems

REPO = "o/r"


@pytest.mark.parametrize(
    "text",
    [
        "a `b @mallory",  # a backtick that opens no code span
        "café@mallory and 日本@mallory",  # after a non-ASCII letter
        "write to mallory@evil.example",  # GitHub links e-mail addresses
        "[x]: http:evil.example\n\n[text][x] and ![][x] and [x]",  # reference-style links
        "- [x]: https://evil.example\n[t][x]",  # a definition at the start of a list item
        "[a](//evil.example/p) [b](\\\\evil.example) [c](/\\evil.example)",  # scheme-relative
        "[a](http:evil.example) [b](https:/evil.example) [c](https:///evil.example)",
        "[up](https://github.com/o/r/../../x) [up](https://github.com/o/r/%2e%2e/%2E%2E/x)",
        "[twice](https://github.com/o/r/%252e%252e/%252e%252e/x)",
        "[user](https://github.com@evil.example/o/r) [port](https://github.com:8443/o/r)",
        "[near](https://github.com/o/r.evil/x) [host](https://github.com.evil.example/o/r)",
        "![beacon](https://evil.example/p.png) <img src=https://evil.example/p.png>",
        "<a href='https://evil.example'>x</a> <script>alert(1)</script> <!-- x -->",
        "&#64;mallory &commat;mallory &#x40;mallory \\@mallory",
        "see www.evil.example, HTTPS://EVIL.EXAMPLE/x, ftp://evil.example, xmpp:a@evil.example",
        "<https://evil.example> <mailto:a@evil.example>",
        "other/repo#12 and @org/team and user/repo@abc1234",
        "\u202eevil\u2066 \u200b@\u200bmallory \U000e0040mallory",
        "[javascript](javascript:alert(1)) [data](data:text/html,x) [vb](vbscript:x)",
        "**@mallory** _@mallory_ ~~@mallory~~ [@mallory](https://github.com/o/r)",
        "$\\href{https://evil.example}{x}$",
    ],
)
def test_nothing_escapes(text):
    out = sanitize(text, REPO)
    assert problems(out, REPO) == [], out


@pytest.mark.parametrize(
    "text",
    [
        "`code with @mallory and https://evil.example/x inside` then more words here",
        "[a long link text that goes on](https://github.com/o/r/issues/1) @mallory",
        "**bold @mallory and more** tail",
    ],
)
@pytest.mark.parametrize("limit", [5, 12, 20, 33, 40, 60])
def test_cutting_never_opens_a_mention(text, limit):
    out = sanitize(text, REPO, limit)
    assert len(out) <= limit
    assert problems(out, REPO) == [], out


def test_links_inside_the_repository_stay_in_one_canonical_form():
    cases = {
        "[ours](https://github.com/o/r/issues/3)": "[ours](https://github.com/o/r/issues/3)",
        "[case](HTTP://GitHub.COM./o/r/pulls)": "[case](https://github.com/o/r/pulls)",
        "[rel](../pulls)": "[rel](https://github.com/o/r/pulls)",
        "[num](3)": "[num](https://github.com/o/r/issues/3)",
        "[abs](/o/r/wiki)": "[abs](https://github.com/o/r/wiki)",
        "[frag](#issuecomment-1)": "[frag](#issuecomment-1)",
        "see https://github.com/o/r/issues/3.": "see <https://github.com/o/r/issues/3>.",
        "www.github.com/o/r": "<https://github.com/o/r>",
        "![shot](https://github.com/o/r/raw/main/a.png)": (
            "![shot](https://github.com/o/r/raw/main/a.png)"
        ),
    }
    for text, expected in cases.items():
        assert sanitize(text, REPO) == expected, text


def test_text_stays_readable():
    text = "Run `pip install x` and see setup.py; it fails *only* on 3.12 (see #4)."
    assert sanitize(text, REPO) == text
    assert sanitize("# not a heading", REPO) == "\\# not a heading"
    assert sanitize("1. not a list", REPO) == "1\\. not a list"
    assert sanitize("a | b", REPO, table=True) == "a \\| b"
    assert sanitize("`a|b`", REPO, table=True) == "`a\\|b`"
    assert sanitize("see [docs](https://evil.example) now", REPO) == f"see docs {LINK_REMOVED} now"


def test_plain_mode_for_logs_keeps_text_but_not_mentions_or_links():
    out = sanitize("engine failed: @mallory [x](https://evil.example) *a*", REPO, plain=True)
    assert out == f"engine failed: @\u200bmallory x {LINK_REMOVED} a"
    assert sanitize("line\x1b[31m red\nnext", REPO, plain=True) == "line[31m red next"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://github.com/o/r", "https://github.com/o/r"),
        ("https://github.com/O/R/issues/1?q=a+b#x", "https://github.com/O/R/issues/1?q=a+b#x"),
        ("https://github.com/o/r/a%20b", "https://github.com/o/r/a%20b"),
        ("https://github.com/o/r/x/../y", "https://github.com/o/r/y"),
        ("https://github.com/o/r/(x)", "https://github.com/o/r/%28x%29"),
        ("//github.com/o/r/x", "https://github.com/o/r/x"),
        ("https://github.com/o/r/../r2", None),
        ("https://github.com/o/r/..%2f..%2fx", None),
        ("https://github.com/o", None),
        ("https://github.com/o/rr", None),
        ("https://gist.github.com/o/r", None),
        ("https://github.com%2eevil.example/o/r", None),
        ("https://ｇithub.com/o/r", None),
        ("http:github.com/o/r", None),
        ("https://github.com/o/r/%00", None),
        ("mailto:a@b.example", None),
        ("../../../x", None),
        ("/o/r/../../x", None),
    ],
)
def test_canonical_url(url, expected):
    assert canonical_url(url, REPO, 7) == expected


def test_long_input_is_cut_before_parsing():
    out = sanitize("a [b](c) `d` " * 100_000, REPO, 300)
    assert len(out) <= 300 and out.endswith("…")
