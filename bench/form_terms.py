"""The type model with and without the block of the body's template or form terms
(`learn/form_terms.py`), held out (issue 30).

    python bench/form_terms.py [WEIGHT ...]

On the settings of `bench/type_cues.py` (hf-datasets with the type prior fit on poetry-sample
alone; poetry-sample's oldest 50 and 70 with it fit on hf-datasets alone), its measures: the top
label and what is proposed at the shipped type floor, macro F1 over every type present and over
bug/enhancement (kind/bug, kind/feature). Variants: the shipped features without the form block,
then with it at each weight (`WEIGHTS`, or those given; the shipped one is
`learn/features.SPECS`'s), the fields left empty skipped (shipped), marked (`e_...`) or read as
answered, with and without the dropdown answers (shipped: without), with and without the
terms of the body's HTML comments (shipped: with). Printed only; docs/benchmarks.md quotes it by
hand.
"""

from __future__ import annotations

import dataclasses
import sys
from functools import cache, partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.fit_type_prior import DATA  # noqa: E402
from bench.type_cues import Variant, measure  # noqa: E402
from issue_assistant.learn import features  # noqa: E402
from issue_assistant.learn.form_terms import form_terms  # noqa: E402
from issue_assistant.learn.rows import Row  # noqa: E402
from issue_assistant.tracker.snapshot import read_snapshot  # noqa: E402

WEIGHTS = (0.15, 0.2, 0.25, 0.3, 0.35, 0.5)
FORM = next(s for s in features.SPECS if s.analyzer == "form")
# (name, what a field left empty gives, whether dropdown answers give terms, whether comments do)
MODES = (("skipped", "skip", False, True), ("skipped, no comments", "skip", False, False),
         ("marked", "mark", False, True), ("skipped, choices", "skip", True, True),
         ("marked, choices", "mark", True, True),
         ("same, choices", "same", True, True))  # fmt: skip


@cache
def bodies(name: str) -> dict[int, str]:
    snapshot = read_snapshot(DATA[name][0])
    return {i.number: i.body or "" for i in snapshot.all_issues()}


def recut(name: str, rows: list[Row], empty: str, choices: bool, comments: bool) -> list[Row]:
    """`rows` with their form terms cut again from the snapshot's bodies."""
    got = bodies(name)
    return [
        dataclasses.replace(r, form=" ".join(form_terms(got[r.number], empty, choices, comments)))
        for r in rows
    ]


def variants(weights: tuple[float, ...] = WEIGHTS) -> list[Variant]:
    plain = tuple(s for s in features.SPECS if s.analyzer != "form")
    out: list[Variant] = [("no form", plain, None)]
    for w in weights:
        spec = dataclasses.replace(FORM, weight=w)
        for mode, empty, choices, comments in MODES:
            cut = partial(recut, empty=empty, choices=choices, comments=comments)
            out.append((f"form {w} {mode}", (*plain, spec), cut))
    return out


if __name__ == "__main__":
    measure(variants(tuple(float(a) for a in sys.argv[1:]) or WEIGHTS))
