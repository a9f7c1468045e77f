"""Tried for issue 30, not shipped: two priors beside the type model, on small histories.

    python bench/type_priors.py

On each setting of the labels section (`bench/section_labels.py`), the type model's top label
1. by its log-probabilities plus `w` times the log of a softmax of `beta` times the TF-IDF cosine
   of the issue to each type's name and description in labels.toml (a zero-shot prior);
2. by `1 - lam` times its probabilities plus `lam` times the vote of the most similar earlier
   labelled issues (`engines/similar_labels.neighbour_labels`, as the engine's vote fallback
   counts it).
Macro F1 over every type present and over bug/enhancement. Printed only; docs/benchmarks.md
quotes it by hand.

    python bench/type_priors.py --sources

The source each fit chose (`learn/neighbours.py`) and its out-of-fold macro F1 per source, on the
labels section's settings and on poetry-sample (the oldest 50 and 70 labelled issues, scored on
the typed issues after them), with the scored issues' macro F1 of the top label.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

BLENDS = ((0.0, 10.0), (0.5, 10.0), (1.0, 10.0), (1.0, 20.0), (2.0, 20.0))  # (w, beta)
VOTE_SHARES = (0.0, 0.2, 0.35, 0.5)  # lam


def blended(model_probs: dict[str, float], prior: dict[str, float], w: float) -> str | None:
    if not model_probs:
        return None
    score = {
        k: np.log(max(v, 1e-9)) + w * np.log(max(prior.get(k, 0.0), 1e-9))
        for k, v in model_probs.items()
    }
    return max(score, key=score.__getitem__)


POETRY = (50, 70)


def sources() -> None:
    from bench.section_labels import DATA, LABELS, ROOT, _f1, _settings, _type_of
    from issue_assistant.config.labels import load_labels
    from issue_assistant.learn.model import fit
    from issue_assistant.learn.rows import rows_from
    from issue_assistant.tracker.snapshot import read_snapshot

    def settings(data: Path, labels_path: Path):  # noqa: ANN202
        labels = load_labels(labels_path)
        snapshot = read_snapshot(data)
        types = set(labels.proposable("type"))
        rows = rows_from(snapshot, labels, snapshot.repository.fetched_at)
        typed = [r for r in rows if _type_of(r, types)]
        if data == DATA:
            return labels, types, _settings(rows, typed, False)
        out = []
        for k in POETRY:
            after = [r for r in typed if r.created_at > rows[k - 1].created_at]
            out.append((f"poetry-sample, oldest {k} labelled issues", rows[:k], after))
        return labels, types, out

    poetry = (
        DATA.parent / "poetry-sample.jsonl.gz",
        ROOT / "tests/data/evaluate/poetry.labels.toml",
    )
    for data, labels_path in ((DATA, LABELS), poetry):
        labels, types, found = settings(data, labels_path)
        for setting, train, test in found:
            model = fit(train, labels, test[0].created_at)
            gm = model.groups["type"]
            probs = model.probabilities_many([r.doc for r in test])
            pred = [max(p["type"], key=p["type"].get) if p.get("type") else None for p in probs]
            gold = [_type_of(r, types) for r in test]
            present = sorted(set(gold))  # type: ignore[arg-type]
            two = [n for n in ("bug", "enhancement") if n in present] or present
            predictions = gm.table.predictions if gm.table else 0
            print(
                f"{setting} | scored {len(test)} | out of fold {gm.sources} ({predictions}) | "
                f"chosen {gm.source} | top label macro F1 all {_f1(gold, pred, present):.3f} "
                f"bug/enhancement {_f1(gold, pred, two):.3f}",
                flush=True,
            )


def main() -> None:
    if "--sources" in sys.argv[1:]:
        sources()
        return
    from sklearn.feature_extraction.text import TfidfVectorizer

    from bench.section_labels import DATA, LABELS, _f1, _settings, _type_of
    from issue_assistant.config.labels import load_labels
    from issue_assistant.learn.model import fit
    from issue_assistant.learn.rows import rows_from
    from issue_assistant.tracker.snapshot import read_snapshot

    labels = load_labels(LABELS)
    snapshot = read_snapshot(DATA)
    types = set(labels.proposable("type"))
    rows = rows_from(snapshot, labels, snapshot.repository.fetched_at)
    typed = [r for r in rows if _type_of(r, types)]
    desc = {t.name: f"{t.name} {t.description}" for t in labels.type if t.name in types}
    names = list(desc)
    for setting, train, test in _settings(rows, typed, False):
        gold = [_type_of(r, types) for r in test]
        present = sorted(set(gold))  # type: ignore[arg-type]
        two = [n for n in ("bug", "enhancement") if n in present]
        model = fit(train, labels, test[0].created_at)
        probs = model.probabilities_many([r.doc for r in test])
        vec = TfidfVectorizer(sublinear_tf=True, stop_words="english")
        vec.fit([f"{r.title} {r.prose}" for r in train] + list(desc.values()))
        sims = (
            vec.transform([f"{r.title} {r.prose}" for r in test])
            @ vec.transform([desc[n] for n in names]).T
        ).toarray()
        cells = []
        for w, beta in BLENDS:
            pred = []
            for p, sim in zip(probs, sims, strict=True):
                e = np.exp(beta * sim)
                prior = dict(zip(names, e / e.sum(), strict=True))
                pred.append(blended(p.get("type", {}), prior, w))
            acc = np.mean([g == q for g, q in zip(gold, pred, strict=True)])
            cells.append(
                f"w={w} beta={beta}: all {_f1(gold, pred, present):.3f} "
                f"bug/enhancement {_f1(gold, pred, two):.3f} accuracy {acc:.3f}"
            )
        print(setting, "| descriptions |", "; ".join(cells), flush=True)
        votes = _votes(snapshot, labels, train, test)
        cells = []
        for lam in VOTE_SHARES:
            pred = []
            for p, v in zip(probs, votes, strict=True):
                mine = p.get("type", {})
                score = {k: (1 - lam) * mine.get(k, 0.0) + lam * v.get(k, 0.0) for k in {*mine, *v}}
                pred.append(max(score, key=score.__getitem__) if score else None)
            cells.append(
                f"lam={lam}: all {_f1(gold, pred, present):.3f} "
                f"bug/enhancement {_f1(gold, pred, two):.3f}"
            )
        print(setting, "| vote blend |", "; ".join(cells), flush=True)


def _votes(snapshot, labels, train, test) -> list[dict[str, float]]:  # noqa: ANN001
    """The vote of the most similar earlier labelled issues for each scored issue, on the
    snapshot cut to the setting's issues (as the labels section's vote row is)."""
    import tempfile

    from issue_assistant.engines.similar_labels import neighbour_labels
    from issue_assistant.index.local import open_index
    from issue_assistant.learn.learned import Beside
    from issue_assistant.moment import Moment
    from issue_assistant.tracker.asof import AsOfView
    from issue_assistant.tracker.snapshot import Snapshot

    keep = {r.number for r in train} | {r.number for r in test}
    sub = Snapshot(
        snapshot.repository,
        [i for i in snapshot.all_issues() if i.number in keep or i.is_pull_request],
    )
    index = open_index(sub, Path(tempfile.mkdtemp(prefix="type-priors-")))
    out = []
    for r in test:
        view = AsOfView.for_issue(sub, r.number)
        at = Moment.build(view, index, labels, Beside(), as_of=view.moment)
        like = at.like(view.target(), limit=30)
        out.append(dict(neighbour_labels(labels, "type", like, 10, 0.0)))
    return out


if __name__ == "__main__":
    main()
