"""What identifies a problem: titles, template stripping and signals on real-looking bodies."""

from hypothesis import given
from hypothesis import strategies as st

from issue_assistant.index.query import (
    clean_title,
    problem_query,
    problem_text,
    signals,
    strip_template,
)

HF_FORM = """### Describe the bug

Streaming a dataset with `load_dataset` fails as soon as the first batch is read.

### Steps to reproduce the bug

```python
from datasets import load_dataset
ds = load_dataset("imagenet-1k", split="validation", streaming=True)
next(iter(ds))
```

```
Traceback (most recent call last):
  File "/usr/lib/python3.11/site-packages/datasets/iterable_dataset.py", line 1388, in __iter__
    for key, example in ex_iterable:
  File "/site-packages/datasets/packaged_modules/parquet/parquet.py", line 82, in _generate_tables
pyarrow.lib.ArrowInvalid: Parquet magic bytes not found in footer
```

### Expected behavior

The first example is printed.

### Environment info

- `datasets` version: 3.3.2
- Platform: Linux-6.8.0-1017-aws-x86_64-with-glibc2.35
- Python version: 3.11.7
- PyArrow version: 19.0.1
"""

POETRY_FORM = """<!--
  Hi there! Thank you for submitting a bug report!
  Before you submit your issue, please review and follow the instructions.
-->

- [x] I am on the [latest](https://github.com/python-poetry/poetry/releases/latest) Poetry version.
- [x] I have searched the issues of this repo and believe that this is not a duplicate.

### Description

`poetry install` crashes with `KeyError: 'files'` when the lock file was written by 1.8.

```
  KeyError

  'files'

  at ~/.local/lib/python3.12/site-packages/poetry/packages/locker.py:412 in _get_locked_package
```

### Workarounds

Deleting poetry.lock works.
"""


def test_bracketed_and_colon_prefixes_are_dropped_from_titles():
    assert clean_title("[Bug]: load_dataset hangs with tensorflow") == (
        "load_dataset hangs with tensorflow"
    )
    assert clean_title("[DevTools Bug] Cannot inspect hooks") == "Cannot inspect hooks"
    assert clean_title("[Feature request] [Audio] Support opus") == "Support opus"
    assert clean_title("Bug: KeyError on install") == "KeyError on install"
    # a bracket that is the problem itself (an error message) stays
    assert clean_title("[TypeError: Couldn't cast array] on map").startswith("[TypeError")
    assert clean_title("[Bug]") == "[Bug]"  # nothing else: keep what there is


def test_issue_form_headings_environment_and_checkboxes_are_stripped():
    hf = strip_template(HF_FORM)
    assert "Describe the bug" not in hf and "Expected behavior" not in hf
    assert "Platform" not in hf and "3.3.2" not in hf  # the environment section is gone
    assert "first batch" in hf and "ArrowInvalid" in hf
    poetry = strip_template(POETRY_FORM)
    assert "Thank you for submitting" not in poetry  # the HTML comment
    assert "I have searched the issues" not in poetry  # the checklist
    assert "KeyError: 'files'" in poetry


def test_signals_name_errors_exceptions_frames_paths_and_identifiers():
    s = signals("[Bug]: streaming fails", HF_FORM)
    assert "ArrowInvalid" in s.exceptions
    assert any("Parquet magic bytes not found" in e for e in s.errors)
    assert "parquet.py:_generate_tables" in s.frames
    assert "iterable_dataset.py" in s.paths
    assert "load_dataset" in s.identifiers
    p = signals("poetry install crashes", POETRY_FORM)
    assert "KeyError" in p.exceptions
    assert "locker.py" in p.paths
    assert "_get_locked_package" in p.identifiers


def test_problem_query_boosts_title_and_signals_and_drops_boilerplate():
    q = problem_query("[Bug]: streaming fails on parquet", HF_FORM)
    words = q.split()
    assert words[:4] == ["streaming^2", "fails^2", "parquet^2"][:3] + [words[3]]
    assert "arrowinvalid^1.5" in words  # the exception, boosted
    assert not any(w.startswith("bug") for w in words)  # the shared prefix
    assert "platform" not in words and "pyarrow" in " ".join(words)
    assert "describe" not in words and "environment" not in words
    assert all(w.replace("^2", "").replace("^1.5", "").isalnum() for w in words)


def test_problem_text_leads_with_the_title_and_error():
    text = problem_text("[Bug]: streaming fails on parquet", HF_FORM)
    assert text.startswith("streaming fails on parquet. ")
    assert "ArrowInvalid: Parquet magic bytes not found" in text[:200]
    assert "Platform" not in text and "```" not in text


def test_hostile_bodies_are_read_in_linear_time():
    """Issue text is untrusted: a body of blank lines, or of one short piece repeated up to
    GitHub's 65,536 characters, is read at once (overlapping `\\s*` runs and unbounded path
    segments once made the search grow with a power of the length: 400 blank lines took 20 s)."""
    import threading

    bodies = ["\n" * 65_000, " \n" * 32_000, "a-" * 32_000, "a." * 32_000, "- [ ]\n" * 10_000]
    done: list[int] = []

    def read() -> None:
        for body in bodies:
            problem_query("t", body)
            signals("t", body)
            done.append(len(strip_template(body).split()))

    worker = threading.Thread(target=read, daemon=True)
    worker.start()
    worker.join(60)  # a few tenths of a second on a slow machine; the old patterns took hours
    assert len(done) == len(bodies) and done[-1] == 0  # and the checkboxes are still stripped


_LINES = st.sampled_from(
    [
        "- [x] I searched the issues",
        "* [ ]",
        "_No response_",
        "N/A",
        "none",
        "- `datasets` version: 2.14.0",
        "Python version: 3.11",
        "- Platform: Linux",
        "### Environment",
        "### Describe the bug",
        "<!-- a hint -->",
        "It fails with ValueError: bad",
        "  none  ",
        "n/a trailing words",
        "",
        "\r",
        " \t ",
    ]
)


@given(st.lists(_LINES, max_size=12), st.sampled_from(["\n", "\r\n"]))
def test_template_lines_are_dropped_one_line_at_a_time_as_the_whole_body_was_searched(lines, sep):
    """`strip_template` matches each line against the unfilled-template pattern; the same as
    searching the joined lines with it anchored at every line (what it did before)."""
    import re

    from issue_assistant.index import query

    whole = re.compile(
        "^" + query._BOILERPLATE.pattern + "$", query._BOILERPLATE.flags | re.MULTILINE
    )
    body = sep.join(lines)
    kept = []
    skipping = False
    for line in query._HTML_COMMENT.sub(" ", body).splitlines():
        heading = query._HEADING.match(line)
        if heading:
            skipping = bool(query._NOISE_SECTION.search(heading.group(1)))
        elif not skipping:
            kept.append(line)
    assert strip_template(body) == whole.sub("", "\n".join(kept))
