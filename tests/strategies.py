"""Hypothesis strategies for hostile issue text, model answers and label sets."""

from __future__ import annotations

import os

from hypothesis import settings
from hypothesis import strategies as st

from issue_assistant.config.labels import LabelsConfig


def examples(n: int) -> settings:
    """A property's own example count in the `ci` profile (tests/conftest.py): high for a cheap
    pure function, lower where each example runs the whole pipeline; a longer profile
    (`HYPOTHESIS_PROFILE=thorough`) runs its own count, never fewer."""
    profile = os.environ.get("HYPOTHESIS_PROFILE", "ci")
    if profile == "ci":
        return settings(max_examples=n)
    return settings(max_examples=max(n, settings.get_profile(profile).max_examples))


# Pieces an attacker (or a confused model) puts in text: mentions, every link form, HTML,
# Markdown structure, invisible and bidi characters, slash commands.
ATTACKS = [
    "@mallory",
    "é@mallory",
    "日本@mallory",
    "@org/team",
    "a@mallory",
    "`",
    "``",
    "```",
    "`@mallory`",
    "[x]: http://evil.example",
    "[x]: http:evil.example",
    "[t][x]",
    "![][x]",
    "[x]",
    "[a](https://evil.example)",
    "![a](https://evil.example/p.png)",
    "<https://evil.example>",
    "https://evil.example/p",
    "HTTPS://EVIL.EXAMPLE",
    "www.evil.example",
    "//evil.example/x",
    "\\\\evil.example",
    "http:evil.example",
    "https:/evil.example",
    "https://github.com/o/r/../../x",
    "https://github.com/o/r/%2e%2e/%2e%2e/x",
    "https://github.com@evil.example/o/r",
    "https://github.com/o/r/issues/1",
    "[ok](https://github.com/o/r/pulls)",
    "[rel](../../../x)",
    "mallory@evil.example",
    "mailto:m@evil.example",
    "other/repo#1",
    "o/r#2",
    "#3",
    "GH-4",
    "<img src=x>",
    "<b>",
    "</details>",
    "<!--",
    "-->",
    "&#64;",
    "&commat;",
    "&lt;",
    "&",
    "\\",
    "*",
    "**",
    "_",
    "~~",
    "|",
    "$",
    "> ",
    "# ",
    "- ",
    "1. ",
    "=== ",
    "\n",
    "\n\n",
    "    ",
    "\t",
    "\r\n",
    "\u2028",
    "\u200b",
    "\u200d",
    "\u202e",
    "\u2066",
    "\ufeff",
    "\x00",
    "\x1b[31m",
    "\x85",
    "\U000e0041",
    "\ud800",
    "/assistant approve",
    "👍",
    "🐛",
    ":bug:",
    "e\u0301",
    " ",
]
LABEL_LIKE = ["🐛 bug", "area: io", "kind/crash", "good first issue", "P1: 🔥", "a b", "x:y"]

fragment = st.one_of(st.sampled_from(ATTACKS), st.text(max_size=12))
short_text = st.lists(fragment, max_size=25).map("".join)
# Up to GitHub's 65,536 characters and beyond, built cheaply from one repeated piece.
long_text = st.builds(
    lambda piece, n: (piece * (n // len(piece) + 1))[:n],
    st.sampled_from([*ATTACKS[:40], "lorem ipsum ", "`@m` [a](//e.x) "]).filter(len),
    st.integers(60_000, 70_000),
)
text = st.one_of(short_text, short_text, long_text)
login = st.from_regex(r"\A[A-Za-z0-9][A-Za-z0-9-]{0,15}\Z")

label_name = st.one_of(
    st.sampled_from(LABEL_LIKE),
    st.text(
        st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp"), blacklist_characters=","),
        min_size=1,
        max_size=50,
    ).filter(lambda s: s.strip() == s and s != ""),
)


@st.composite
def label_sets(draw: st.DrawFn) -> LabelsConfig:
    """A valid labels.toml: label names with emoji, colons and spaces among them."""
    names = draw(st.lists(label_name, min_size=2, max_size=10, unique_by=str.lower))
    cut1 = draw(st.integers(1, len(names)))
    cut2 = draw(st.integers(cut1, len(names)))
    cut3 = draw(st.integers(cut2, len(names)))
    group = {
        "type": names[:cut1],
        "area": names[cut1:cut2],
        "topic": names[cut2:cut3],
        "priority": names[cut3:],
    }
    return LabelsConfig.model_validate(
        {
            "max_areas": draw(st.integers(0, 3)),
            "max_topics": draw(st.integers(0, 3)),
            **{
                g: [{"name": n, "propose": draw(st.booleans()) or i == 0} for i, n in enumerate(ns)]
                for g, ns in group.items()
            },
        }
    )


def answers(labels: LabelsConfig, numbers: list[int]) -> st.SearchStrategy[dict]:
    """A model's JSON answer: label names from the set or made up, any duplicate, any text."""
    names = sorted(labels.all_names())
    name = st.one_of(st.sampled_from(names), st.sampled_from(LABEL_LIKE), short_text)
    number = st.one_of(st.sampled_from(numbers), st.integers(-5, 10**6))
    duplicate = st.fixed_dictionaries(
        {"number": number, "reason": text, "confidence": st.floats(0, 1)}
    )
    return st.fixed_dictionaries(
        {
            "type": st.none() | name,
            "areas": st.lists(name, max_size=6),
            "topics": st.lists(name, max_size=6),
            "priority": st.none() | name,
            "duplicate": st.none() | duplicate,
            "questions": st.lists(text, max_size=8),
            "summary": text,
        }
    )
