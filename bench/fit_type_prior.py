"""Fit the shipped type prior (`issue_assistant/learn/type_prior.py`) on the shared data, or
measure it held out.

    python bench/fit_type_prior.py            # writes issue_assistant/learn/type_prior.npz
    python bench/fit_type_prior.py --measure  # held out: each snapshot scored with the prior
                                              # fit on the other one alone

The data: every issue with exactly one type label of the snapshot's labels.toml whose name maps
onto a kind (`type_prior.kind_of`). `--measure` prints, for each C of `CS` (the prior's
inverse regularisation), on every setting of the labels section (hf-datasets) and
poetry-sample's oldest 50 and 70, the type model's top label and proposal without the prior and
with it (`bench/type_prior_measure.py`), macro F1 over the types present and over
bug/enhancement (kind/bug, kind/feature on poetry-sample).
"""

from __future__ import annotations

import sys
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import commit  # noqa: E402
from issue_assistant.config.labels import load_labels  # noqa: E402
from issue_assistant.learn import type_prior  # noqa: E402
from issue_assistant.learn.rows import Row, rows_from  # noqa: E402
from issue_assistant.tracker.snapshot import read_snapshot  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DATA = {
    "hf-datasets": (
        ROOT.parent / "shared/data/hf-datasets.jsonl.gz",
        ROOT / "bench/hf-datasets.labels.toml",
    ),
    "poetry-sample": (
        ROOT.parent / "shared/data/poetry-sample.jsonl.gz",
        ROOT / "tests/data/evaluate/poetry.labels.toml",
    ),
}
POETRY = (50, 70)
CS = (1.0,)


def labelled(name: str) -> tuple[list[Row], set[str]]:
    data, labels_path = DATA[name]
    labels = load_labels(labels_path)
    snapshot = read_snapshot(data)
    return rows_from(snapshot, labels, snapshot.repository.fetched_at), set(
        labels.proposable("type")
    )


def typed_kinds(names: list[str]) -> tuple[list[tuple[str, str]], list[str]]:
    docs, kinds = [], []
    for name in names:
        rows, types = labelled(name)
        for r in rows:
            mine = [n for n in r.labels if n in types]
            kind = type_prior.kind_of(mine[0]) if len(mine) == 1 else None
            if kind is not None:
                docs.append(r.doc)
                kinds.append(kind)
    return docs, kinds


def fit(names: list[str]) -> type_prior.TypePrior:
    docs, kinds = typed_kinds(names)
    about = {
        "data": [f"../shared/data/{Path(DATA[n][0]).name}" for n in names],
        "commit": commit(),
        "date": date.today().isoformat(),
        "features": "hashed word 1-2 grams (title, prose), char 3-5 grams (title), word vectors",
    }
    return type_prior.fit_prior(docs, kinds, about)


def main() -> None:
    if "--measure" in sys.argv[1:]:
        from bench.type_prior_measure import measure

        for c in CS:
            type_prior.C = c
            print(f"# C {c}", flush=True)
            measure({n: fit([m for m in DATA if m != n]) for n in DATA})
        return
    prior = fit(list(DATA))
    prior.save(type_prior.PRIOR_FILE)
    print(f"wrote {type_prior.PRIOR_FILE} ({prior.about['issues']}, {len(prior.buckets)} buckets)")


if __name__ == "__main__":
    main()
