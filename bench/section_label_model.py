"""Benchmark: the label model's variants on the type group of hf-datasets, chosen on a dev split.

The issues with exactly one type label, oldest first. Test: the newest 200 (as in the labels
section). Dev: the three windows of 200 before them, each scored by a model fit on the issues
before it (all of them, or the 300 just before); the dev figures pool the three windows' 600
issues. The variants were compared on dev; the test rows are reported, not chosen on. Top label
always answers (no threshold): this compares models, not calibration.

Embeddings: all-MiniLM-L6-v2 vectors of each issue's `embedding_text` (as the index stores
them), computed once into `.cache/bench-label-model/` (needs the `embeddings` extra).
"""

from __future__ import annotations

import time
import warnings
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np

from bench.common import commit
from bench.section_labels import DATA, LABELS, machine
from issue_assistant.config.labels import load_labels
from issue_assistant.learn import features, heads, logistic
from issue_assistant.learn.model import fit
from issue_assistant.learn.rows import Row, rows_from
from issue_assistant.learn.sparse import Csr, Dense
from issue_assistant.tracker.snapshot import read_snapshot

TITLE = "Label model variants (`bench/section_label_model.py`)"
ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".cache" / "bench-label-model"
WINDOW = 200
SMALL = 300
BODY_CHARS = features.PartSpec("body_chars", 1, "char_wb", (3, 5), min_df=2, max_features=100_000)


def vectors(snapshot, name: str = "hf-datasets") -> dict[int, np.ndarray]:  # noqa: ANN001
    """Every labelled issue's embedding, computed once and cached (under `name`)."""
    from issue_assistant.index.duplicates import embedding_text
    from issue_assistant.index.embeddings import load_embedder

    path = CACHE / f"{name}-vectors.npz"
    if path.is_file():
        data = np.load(path)
        return dict(zip(data["numbers"].tolist(), data["vectors"], strict=True))
    embedder = load_embedder()
    if embedder is None:
        raise SystemExit("bench label_model: needs the embeddings extra (pip install -e '.[dev]')")
    issues = [i for i in snapshot.all_issues() if not i.is_pull_request and i.labels]
    vecs = np.stack([embedder.embed_one(embedding_text(i)) for i in issues])
    CACHE.mkdir(parents=True, exist_ok=True)
    np.savez(path, numbers=np.array([i.number for i in issues]), vectors=vecs)
    return {i.number: v for i, v in zip(issues, vecs, strict=True)}


Predict = Callable[[list[Row], list[Row]], tuple[list[str], np.ndarray]]


def _shipped(labels, vec: dict | None) -> Predict:  # noqa: ANN001
    """The model as shipped (`learn.model.fit`), with or without the embeddings."""

    def predict(train: list[Row], test: list[Row]) -> tuple[list[str], np.ndarray]:
        cutoff = test[0].created_at
        model = fit(train, labels, cutoff, calibrate=False, vectors=vec.get if vec else None)
        gm = model.groups["type"]
        docs = [r.doc for r in test]
        x = model.featurizer.rows(docs)  # type: ignore[union-attr]
        dense = np.vstack([vec[r.number] for r in test]) if vec else None
        probs = gm.probabilities(x, dense)
        return gm.classes, np.array([[p[c] for c in gm.classes] for p in probs])

    return predict


def _typed_xy(train: list[Row], types: set[str]) -> tuple[list[Row], list[str], np.ndarray]:
    counts = Counter(_type(r, types) for r in train)
    classes = sorted(c for c in counts if counts[c] >= 5)
    train = [r for r in train if _type(r, types) in classes]
    return train, classes, np.array([classes.index(_type(r, types)) for r in train])


def _variant(  # noqa: ANN202
    types: set[str],
    *,
    balanced: bool = True,
    body_chars: bool = False,
    vec: dict | None = None,
    average: bool = False,
):
    """A TF-IDF logistic regression with one change, fit through `learn/heads.py`."""

    def predict(train: list[Row], test: list[Row]) -> tuple[list[str], np.ndarray]:
        train, classes, y = _typed_xy(train, types)
        kind = "binary" if len(classes) == 2 else "softmax"
        specs = (*features.SPECS, BODY_CHARS) if body_chars else features.SPECS
        feats = features.fit_features([r.doc for r in train], specs)
        x = feats.matrix([r.doc for r in train])
        xt = feats.matrix([r.doc for r in test])
        old, heads.BALANCED = heads.BALANCED, balanced
        try:
            c = heads.choose_c(x, y, kind, len(classes), heads.C_GRID)
            proba = logistic.probabilities(xt, heads._fit(x, y, kind, len(classes), c), kind)
            if average and vec is not None:
                d = Dense(np.vstack([vec[r.number] for r in train]).astype(np.float64))
                dt = Dense(np.vstack([vec[r.number] for r in test]).astype(np.float64))
                dc = heads.choose_c(d, y, kind, len(classes), heads.C_GRID)
                dense = heads._fit(d, y, kind, len(classes), dc)
                proba = (proba + logistic.probabilities(dt, dense, kind)) / 2
        finally:
            heads.BALANCED = old
        return classes, proba

    return predict


def _sgd(types: set[str]) -> Predict:
    """The model until now: scikit-learn's SGDClassifier (log loss, alpha 2e-5, balanced, 50
    epochs) on the same TF-IDF features."""

    def predict(train: list[Row], test: list[Row]) -> tuple[list[str], np.ndarray]:
        from scipy import sparse
        from sklearn.linear_model import SGDClassifier

        train, classes, y = _typed_xy(train, types)
        feats = features.fit_features([r.doc for r in train])

        def sp(m: Csr):  # noqa: ANN202
            return sparse.csr_matrix((m.data, m.indices, m.indptr), shape=m.shape)

        est = SGDClassifier(loss="log_loss", alpha=2e-5, class_weight="balanced", max_iter=50,
                            tol=None, random_state=0)  # fmt: skip
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(sp(feats.matrix([r.doc for r in train])), y)
        return classes, est.predict_proba(sp(feats.matrix([r.doc for r in test])))

    return predict


def _type(row: Row, types: set[str]) -> str | None:
    mine = [n for n in row.labels if n in types]
    return mine[0] if len(mine) == 1 else None


def _scores(items: list[tuple[list[str], list[str]]]) -> tuple[float, float, float, int]:
    """Pooled (macro F1 over the labels present, macro F1 over labels with 10+, accuracy)."""
    gold = [g for gs, _ in items for g in gs]
    pred = [p for _, ps in items for p in ps]
    counts = Counter(gold)

    def f1(names: list[str]) -> float:
        out = []
        for n in names:
            tp = sum(1 for g, p in zip(gold, pred, strict=True) if g == p == n)
            denom = gold.count(n) + pred.count(n)
            out.append(2 * tp / denom if denom else 0.0)
        return float(np.mean(out)) if out else 0.0

    big = sorted(n for n, k in counts.items() if k >= 10)
    acc = sum(g == p for g, p in zip(gold, pred, strict=True)) / len(gold)
    return f1(sorted(counts)), f1(big), acc, len(big)


def run(quick: bool = False) -> str:
    labels = load_labels(LABELS)
    snapshot = read_snapshot(DATA)
    types = set(labels.proposable("type"))
    rows = rows_from(snapshot, labels, snapshot.repository.fetched_at)
    typed = [r for r in rows if _type(r, types)]
    vec = vectors(snapshot)
    n = len(typed)
    dev = [
        (typed[: n - WINDOW * j], typed[n - WINDOW * j : n - WINDOW * (j - 1)]) for j in (2, 3, 4)
    ]
    test = [(typed[:-WINDOW], typed[-WINDOW:])]
    if quick:
        dev = dev[:1]
    variants: list[tuple[str, Predict]] = [
        ("until now: SGD (scikit-learn), same features", _sgd(types)),
        ("**now**: logistic regression, C by CV", _shipped(labels, None)),
        ("**now, `embeddings = true`**: one model on TF-IDF and embeddings", _shipped(labels, vec)),
        ("TF-IDF and embedding models, probabilities averaged", _variant(types, vec=vec,
                                                                         average=True)),
        ("logistic regression, classes unweighted", _variant(types, balanced=False)),
        ("logistic regression + body char 3-5-grams", _variant(types, body_chars=True)),
    ]  # fmt: skip
    lines = [
        f"Data: `hf-datasets`, {n} issues with one type label; commit `{commit()}`; {machine()}; "
        f"{time.strftime('%Y-%m-%d')}. Rerun: `python bench/run.py --only label_model`.",
        "",
        "Dev: three windows of 200 (the 600 issues before the test 200), pooled; test: the newest "
        "200 (the labels section's split). Each cell: macro F1 over the labels present / over "
        "the labels with 10+ issues among those scored / accuracy. Top label (no threshold). "
        "The machine is shared with other work: fit times are wall time under load.",
        "",
        "| variant | dev, all older | dev, 300 | test, all older | test, 300 | fit (test, all) |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for name, predict in variants:
        cells = []
        fit_s = 0.0
        for split in (dev, test):
            for small in (False, True):
                items = []
                for older, window in split:
                    train = older[-SMALL:] if small else older
                    start = time.perf_counter()
                    classes, proba = predict(train, window)
                    if split is test and not small:
                        fit_s = time.perf_counter() - start
                    pred = [classes[i] for i in proba.argmax(axis=1)]
                    items.append(([_type(r, types) for r in window], pred))
                fa, fb, acc, _ = _scores(items)  # type: ignore[arg-type]
                cells.append(f"{fa:.3f} / {fb:.3f} / {acc:.3f}")
        lines.append(f"| {name} | {' | '.join(cells)} | {fit_s:.1f} s |")
    return "\n".join(lines)
