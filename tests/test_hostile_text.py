"""The readers of an issue's text find what they found before, now in time proportional to the
text's length (`bench/section_hostile_text.py` measures that): each pattern below is checked
against the one it replaced, which tried every place a long run could start, on text built from
the pieces those patterns look for."""

from __future__ import annotations

import re

from hypothesis import example, given, settings
from hypothesis import strategies as st

from issue_assistant import forms
from issue_assistant.index import traces
from issue_assistant.learn import text as learn_text
from issue_assistant.likely import signals

# The patterns as they were.
OLD_PATHLIKE = re.compile(r"(?:[A-Za-z]:)?(?:[~.\w-]*[/\\])+[\w.-]*")
OLD_COLAB = re.compile(r"\[?(/[^\]\s()]+\.py)\]?(?:\([^)\s]*\))? in ([\w<>.]+)\(")
OLD_CHECKBOX = re.compile(r"^\s*[-*]\s*\[[ xX]\]\s*", re.MULTILINE)
OLD_ERROR_LINE = re.compile(
    r"^\s*(?:[\w.]+\.)?([A-Z]\w*(?:Error|Exception|Warning|Exit))\s*:\s*(.+?)\s*$", re.MULTILINE
)
OLD_NOISE = re.compile(
    r"<!--.*?-->|</?details[^>]*>|<summary[^>]*>.*?</summary>|^\s*(```|~~~)[\w .+-]*$",
    re.DOTALL | re.MULTILINE | re.IGNORECASE,
)


def texts(*pieces: str, most: int = 40) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(pieces), max_size=most).map("".join)


PATHS = texts("a", "b", "C:", "ab:", "/", "\\", ".", "~", "-", "_", " ", "\n", "1", ":", "x.py")
FRAMES = texts(
    "/", "a", ".py", "[", "]", "(", ")", "(12)", " in ", "f", "~", " ", "\n", "<", ">", "x/"
)
LINES = texts(
    "ValueError", "mod.", "KeyError", ":", " ", "\t", "\n", "\r", "msg", "'q'", "Exit", "x"
)
BOXES = texts("- [ ]", "* [x]", "-", "[", " ", "\n", "\t", "text", "]", "*")
NOISE = texts("<!-- a -->", "<details>", "</details>", "<summary>s</summary>", "```py", "~~~",
              "\n", " ", "text", "<b>")  # fmt: skip


@settings(max_examples=300)
@given(PATHS)
@example("ab:/x C:\\y~z/w a/b~c")
def test_a_path_is_found_where_it_was(text):
    assert traces._PATHLIKE.sub(" ", text) == OLD_PATHLIKE.sub(" ", text)


@settings(max_examples=300)
@given(FRAMES)
@example("[/a.py] in f(x) and x[/b.py(3) in g(")
@example("~/lib/a.py in f(x) /x/y.pyc in g( /z.py in h(")
def test_a_colab_frame_is_found_where_it_was(text):
    found = [(m.start(), m.groups()) for m in traces._colab_frames(text)]
    assert found == [(m.start(), m.groups()) for m in OLD_COLAB.finditer(text)]


@settings(max_examples=300)
@given(LINES)
def test_an_error_line_reads_as_it_did(text):
    def read(pattern: re.Pattern[str]) -> list[tuple[str, str]]:
        return [(m[1], m[2].rstrip()) for m in pattern.finditer(text)]

    assert read(signals._ERROR_LINE) == read(OLD_ERROR_LINE)


@settings(max_examples=300)
@given(BOXES)
def test_a_checkbox_leaves_the_same_words(text):
    def words(pattern: re.Pattern[str]) -> str:
        return " ".join(pattern.sub(" ", text).split())

    assert words(learn_text._CHECKBOX) == words(OLD_CHECKBOX)


@settings(max_examples=300)
@given(NOISE)
def test_closed_comments_and_wrappers_leave_the_same_words(text):
    assert forms.normal(text) == " ".join(OLD_NOISE.sub(" ", text).split())


def test_a_comment_left_open_hides_the_rest_as_github_shows_it():
    assert forms.normal("see <!-- a hint left open\n\nmore") == "see"
    assert forms.normal("<!-- a --> kept <!-- open") == "kept"


def test_a_long_error_message_is_cut_and_a_list_cut_short_left_out():
    listing = ", ".join(f"'file_{i}.json'" for i in range(200))
    text = f"FileNotFoundError: Unable to find any data file with any extension [{listing}]\n"
    assert len(text) > signals.MESSAGE_CHARS
    assert signals.message_fragments(text) == [
        ("FileNotFoundError", "Unable to find any data file with any extension")
    ]


OLD_HUB_ID = re.compile(r"[\w-]+/[\w.-]+", re.IGNORECASE | re.MULTILINE)
OLD_PROMPT = re.compile(r"^\s*(>>>|\$ )", re.IGNORECASE | re.MULTILINE)


@given(texts("a", "_", "-", "/", ".", " ", "\n", "\t", ">>>", "$ ", "$", "x", most=30))
@example("ab_c-d/e")
@example("\n\n  $ poetry lock")
def test_the_bench_labels_questions_see_what_they_saw(text):
    """bench/hf-datasets.labels.toml's Hub id and prompt patterns start only where a run of
    their characters starts (or a line, after spaces and tabs): they answer as before."""
    from issue_assistant.config.labels import load_labels
    from tests.conftest import ROOT

    labels = load_labels(ROOT / "bench" / "hf-datasets.labels.toml")
    detect = {p for t in labels.type for a in t.ask for p in a.detect}
    hub = re.compile(r"(?<![\w-])[\w-]+/[\w.-]+", re.IGNORECASE | re.MULTILINE)
    prompt = re.compile(r"^[ \t]*(>>>|\$ )", re.IGNORECASE | re.MULTILINE)
    assert {hub.pattern, prompt.pattern} <= detect
    assert bool(hub.search(text)) == bool(OLD_HUB_ID.search(text))
    assert bool(prompt.search(text)) == bool(OLD_PROMPT.search(text))


def test_the_questions_patterns_read_a_hostile_body_at_once():
    """`init`'s starter asks and the bench labels' asks, on each hostile body of the bench at
    GitHub's 65,536 characters (64 KB of underscores took 20 s with the old Hub id pattern)."""
    import threading

    from bench.section_hostile_text import bodies, missing_asks

    done: list[str] = []

    def read() -> None:
        for name, body in bodies(65_536).items():
            missing_asks(body)
            done.append(name)

    worker = threading.Thread(target=read, daemon=True)
    worker.start()
    worker.join(10)  # well under a second here; the old Hub id pattern alone took 20 s
    assert len(done) == len(bodies(16))
