"""Benchmark: reading an issue's text costs time in proportion to its length, whatever it holds.

    python -c 'import bench.section_hostile_text as s; print(s.run())'

Anyone can open an issue, and every run reads its title and body: the label model's text, the
template's headings and comments, the form's answers, the duplicate evidence, the search
signals, the error messages the likely files look for. A regular expression that tries each
place a long run of characters could start reads the run again from each one: its time grows
with the square of the length. The inputs are bodies built to find such places (one short piece
repeated: blank lines, slashes, dots, open HTML comments, an error line full of spaces ...) at
16 and 64 KB (GitHub keeps at most 65,536 characters of a body); each of the readers below is
timed on each, and the slowest is reported. At four times the length a reader in proportion
takes about four times as long.
"""

from __future__ import annotations

import platform
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from bench.common import commit
from issue_assistant import asking, forms
from issue_assistant.config.labels import Ask, load_labels
from issue_assistant.index import evidence, query, traces
from issue_assistant.init.files import BUG_ASK
from issue_assistant.learn import text as learn_text
from issue_assistant.learn.form_terms import form_terms
from issue_assistant.likely import signals
from issue_assistant.tracker.models import Issue, User

TITLE = "Hostile issue text (`bench/section_hostile_text.py`)"
SIZES = (16_384, 65_536)
PIECES = {
    "blank lines": " \n",
    "newlines": "\n",
    "slashes": "/a",
    "`[/a` repeated": "[/a",
    "dots": "a.",
    "underscores": "_",
    "digits and dots": "1.",
    "open HTML comments": "<!--",
    "HTML comments": "<!-- a b -->",
    "fence lines": "```\n",
    "open `<summary>`": "<summary>",
    "open `<details`": "<details",
    "quotes": "'a",
    "parentheses": "a(",
    "`at` lines of a .NET trace cut short": "\n   at a.b[x](",
    "chained errors": "The above exception was the direct cause of\nValueError: a b c\n",
}
# Whole bodies that are not one piece repeated: an error line whose message is mostly spaces,
# and one whose message is one long run with slashes in it.
BODIES: dict[str, Callable[[int], str]] = {
    "an error line of spaces": lambda n: ("ValueError: a" + " " * n)[: n - 1] + "b",
    "an error line of slashes": lambda n: ("ValueError: " + "a/" * n)[:n],
}
# The questions' `detect` patterns: `init`'s starter list and the hand-written ones of the bench's
# labels.toml (a maintainer's own patterns are theirs: docs/configuration.md says how to keep
# them linear).
ASKS = [Ask.model_validate(a) for a in BUG_ASK] + [
    a for t in load_labels(Path(__file__).with_name("hf-datasets.labels.toml")).type for a in t.ask
]


def missing_asks(body: str) -> list[Ask]:
    """The asks of `ASKS` that an issue of `body` does not answer."""
    issue = Issue(number=1, title="it fails", body=body, user=User(login="reporter"),
                  created_at=datetime(2025, 1, 1, tzinfo=UTC))  # fmt: skip
    return asking.missing(ASKS, issue)


READERS: dict[str, Callable[[str], object]] = {
    "the label model's text (`learn.text.prose`)": learn_text.prose,
    "the template's headings and comments (`learn.form_terms`)": form_terms,
    "the form's answers (`forms.parse`)": forms.parse,
    "a field's words (`forms.normal`)": forms.normal,
    "the duplicate evidence (`index.evidence.traits`)": lambda t: evidence.traits("title", t),
    "an error line's key (`index.traces.message_key`)": traces.message_key,
    "the search signals (`index.query.signals`)": lambda t: query.signals("title", t),
    "the error messages (`likely.signals.message_fragments`)": signals.message_fragments,
    "the questions' patterns (`asking.missing`)": missing_asks,
}


def bodies(size: int) -> dict[str, str]:
    """Each hostile body at `size` characters."""
    out = {name: (piece * (size // len(piece) + 1))[:size] for name, piece in PIECES.items()}
    out.update({name: make(size) for name, make in BODIES.items()})
    return out


def slowest(size: int) -> dict[str, tuple[float, str]]:
    """Per reader: (its most CPU seconds on a body of `size`, which body)."""
    out: dict[str, tuple[float, str]] = {}
    for body_name, body in bodies(size).items():
        for reader_name, read in READERS.items():
            start = time.process_time()
            read(body)
            spent = time.process_time() - start
            if spent >= out.get(reader_name, (-1.0, ""))[0]:
                out[reader_name] = (spent, body_name)
    return out


def run(quick: bool = False) -> str:
    sizes = SIZES[:1] if quick else SIZES
    by_size = {size: slowest(size) for size in sizes}
    rows = []
    for reader in READERS:
        cells = []
        for size in sizes:
            spent, body = by_size[size][reader]
            cells.append(f"{spent * 1000:.0f} ms ({body})")
        rows.append(f"| {reader} | " + " | ".join(cells) + " |")
    python = f"{platform.python_implementation()} {platform.python_version()}"
    machine = f"{platform.machine()}, {python}"
    head = " | ".join(f"slowest at {size:,} characters" for size in sizes)
    return "\n".join(
        [
            f"Commit `{commit()}`, {machine}; CPU time of one read, the slowest of "
            f"{len(PIECES) + len(BODIES)} hostile bodies (named beside it).",
            "",
            f"| reader | {head} |",
            "| --- |" + " ---: |" * len(sizes),
            *rows,
        ]
    )


if __name__ == "__main__":
    print(run())
