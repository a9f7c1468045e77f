"""The type model with and without the title's cue block (`learn/cues.py`), held out (issue 30).

    python bench/type_cues.py

On every setting of the labels section (hf-datasets, with the type prior fit on poetry-sample
alone, as that section does) and on poetry-sample's oldest 50 and 70 labelled issues (the prior
fit on hf-datasets alone): the top label and what is proposed at the shipped type floor, macro F1
over every type present and over bug/enhancement (kind/bug, kind/feature), and the F1 of the
rare types (documentation, question; kind/question) where they are among the scored issues.
Variants: the features without the cue block, and with it at each weight of `WEIGHTS` (the
shipped one is `learn/features.SPECS`'s).
Printed only; docs/benchmarks.md quotes it by hand.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sklearn.metrics import f1_score  # noqa: E402

from bench.section_labels import _f1  # noqa: E402
from bench.type_prior_measure import held_out, proposed, type_probabilities  # noqa: E402
from issue_assistant.learn import features, model  # noqa: E402
from issue_assistant.learn.rows import Row  # noqa: E402

WEIGHTS = (0.25, 0.3, 0.35, 0.4, 0.5, 0.7)
RARE = ("documentation", "question", "kind/question")


def variants() -> list[tuple[str, tuple]]:
    plain = tuple(s for s in features.SPECS if s.analyzer != "cues")
    cues = [s for s in features.SPECS if s.analyzer == "cues"]
    out = [("no cues", plain)]
    for w in WEIGHTS:
        out.append((f"cues {w}", plain + tuple(dataclasses.replace(s, weight=w) for s in cues)))
    return out


def _one(gold: list, pred: list, name: str) -> float:
    pred = [p or "(none)" for p in pred]
    return float(f1_score(gold, pred, labels=[name], average="macro", zero_division=0))


# (name, the specs, what to do to the rows first: None leaves them as read)
Variant = tuple[str, tuple, Callable[[str, list[Row]], list[Row]] | None]


def measure(variants: list[Variant]) -> None:
    """Print each variant's line on every held-out setting; a variant's own cut rewrites the
    rows (of the snapshot named) before the fit."""
    shipped = model.fit_features
    try:
        for name, labels, setting, train, test, gold, present, two in held_out():
            rare = [n for n in RARE if n in present]
            for variant, specs, cut in variants:
                model.fit_features = partial(features.fit_features, specs=specs)
                fit_rows, scored = (
                    (train, test) if cut is None else (cut(name, train), cut(name, test))
                )
                m = model.fit(fit_rows, labels, scored[0].created_at)
                gm = m.groups["type"]
                probs = type_probabilities(m, scored)
                top = [max(p, key=p.get) if p else None for p in probs]
                at = proposed(gm, probs)
                cover = sum(a is not None for a in at) / len(at)
                cells = [
                    f"{what} all {_f1(gold, pred, present):.3f} two {_f1(gold, pred, two):.3f} "
                    + " ".join(f"{r} {_one(gold, pred, r):.3f}" for r in rare)
                    for what, pred in (("top", top), ("proposed", at))
                ]
                print(
                    f"{name} | {setting} | scored {len(test)} ({', '.join(rare) or 'no rare'}) | "
                    f"{variant} | {' | '.join(cells)} | cov {cover:.2f} | learned {gm.classes}",
                    flush=True,
                )
    finally:
        model.fit_features = shipped


def main() -> None:
    measure([(name, specs, None) for name, specs in variants()])


if __name__ == "__main__":
    main()
