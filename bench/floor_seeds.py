"""The type floor under different fold shuffles: on every setting of the labels section
(hf-datasets) and poetry-sample's oldest 50 and 70, the model is fit with the stratified folds
dealt by each seed of `SEEDS` (`learn/folds.py`'s SEED), and what is proposed on the scored
issues is measured by the floor before (a bucket whose point precision is under the floor
abstains) and now (`learn/tiers.py`: only where the history is sure it is under), with the
source chosen (model, blend, vote), whether the type prior was kept and each choice's out-of-fold
macro F1. The type prior is held out as in `bench/fit_type_prior.py --measure`.

    python bench/floor_seeds.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.section_labels import RULE, _f1  # noqa: E402
from bench.type_prior_measure import held_out, proposed, type_probabilities  # noqa: E402
from issue_assistant.learn import folds  # noqa: E402
from issue_assistant.learn.model import fit  # noqa: E402
from issue_assistant.learn.tiers import measured  # noqa: E402

SEEDS = range(5)


def before(gm, probs: list[dict[str, float]]) -> list[str | None]:  # noqa: ANN001
    """The floor before: the bucket's point precision under the floor abstains."""
    if not measured(gm.table):
        return proposed(gm, probs)
    curve = gm.table.curves[""]
    out = []
    for p in probs:
        name, conf = max(p.items(), key=lambda kv: (kv[1], kv[0]))
        b = curve.bucket_at(conf)
        ok = b is not None and b.precision >= RULE.floor_of(True) - 1e-12
        out.append(name if ok else None)
    return out


def main() -> None:
    for name, labels, setting, train, test, gold, present, two in held_out():
        for seed in SEEDS:
            folds.SEED = seed
            model = fit(train, labels, test[0].created_at)
            gm = model.groups["type"]
            probs = type_probabilities(model, test)
            cells = []
            for rule, got in (("before", before(gm, probs)), ("now", proposed(gm, probs))):
                cover = sum(g is not None for g in got) / len(got)
                cells.append(
                    f"{rule}: cov {cover:.2f} two {_f1(gold, got, two):.3f} "
                    f"all {_f1(gold, got, present):.3f}"
                )
            method = gm.table.method if gm.table else "-"
            kept = "kept" if gm.prior_weight > 0 else "dropped"
            oof = " ".join(f"{k} {v:.3f}" for k, v in gm.sources.items())
            print(
                f"{name} | {setting} | seed {seed} ({method}, source {gm.source}, prior {kept}) | "
                + " | ".join(cells)
                + f" | out of fold: {oof}",
                flush=True,
            )
            if method != "stratified":
                break  # time-ordered folds or none: no shuffle to vary
    folds.SEED = 0


if __name__ == "__main__":
    main()
