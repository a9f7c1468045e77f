"""The learned label model: per label group, a linear classifier over the repository's own history.

`type` and `priority` are single-label (one multinomial logistic regression over the issues with
exactly one label of the group); `area` and `topic` are multi-label (one-vs-rest over every
triaged issue, so silence is a vote for none). A label with fewer than `MIN_EXAMPLES` labelled
issues is not learned; a group with fewer than `MIN_ISSUES` labelled issues (or fewer than two
learned types) is not learned at all and the engine falls back to the neighbour vote for it.

Fitting is numpy alone (`learn/features.py`, `learn/logistic.py`, `learn/heads.py`); the fitted
model is kept as numpy arrays (`learn/linear.py`, `learn/artifact.py`).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from issue_assistant.config.labels import GROUPS, LabelsConfig
from issue_assistant.learn import heads, type_prior
from issue_assistant.learn.confidence import ThresholdTable
from issue_assistant.learn.features import fit_features
from issue_assistant.learn.fitting import Fitting
from issue_assistant.learn.folds import NEIGHBOURS, WITHOUT_PRIOR, Predict, collect
from issue_assistant.learn.linear import Featurizer, LinearHead
from issue_assistant.learn.neighbours import (
    SOURCES,
    Neighbours,
    choose_source,
    macro_f1,
    mix,
    rows_matrix,
    surely_better,
)
from issue_assistant.learn.rows import Row, Vectors, fingerprint
from issue_assistant.learn.rowspace import RowSpace
from issue_assistant.learn.sparse import Csr
from issue_assistant.learn.text import Doc, fields
from issue_assistant.tracker.models import Issue

# out-of-fold (probabilities, gold labels) per scored issue
Predictions = list[tuple[dict[str, float], list[str]]]

MIN_EXAMPLES = 5
MIN_ISSUES = 30
# A fit reads at most the most recent MAX_ROWS labelled issues: what it costs (time and memory)
# stops growing with the repository, and recent issues show how it labels now.
MAX_ROWS = 5000
SINGLE = ("type", "priority")


@dataclass
class GroupModel:
    """One group's classifier (None when the group falls back to the vote) and its CV table.

    `head` holds the TF-IDF features' coefficients and the intercepts. With sentence embeddings
    (`[index] embeddings = true`, every training issue's vector stored), one model is fit on both
    blocks: `dense` holds the embedding block's coefficients, and an issue without a vector is
    given the training issues' mean vector (`dense_mean`).
    """

    group: str
    mode: str  # "learned" or "vote"
    reason: str
    classes: list[str] = field(default_factory=list)
    head: LinearHead | None = None
    issues: int = 0
    table: ThresholdTable | None = None
    dense: LinearHead | None = None
    c: float | None = None
    dense_mean: np.ndarray | None = None
    # What a single-label group proposes from (`learn/neighbours.py`): "model", "blend" or
    # "vote", chosen on out-of-fold evidence; and each source's out-of-fold macro F1 there.
    source: str = "model"
    sources: dict[str, float] = field(default_factory=dict)
    # The type group only: its labels that map onto the shipped prior's kinds
    # (`learn/type_prior.py`) and the prior's weight beside the model (0: no prior).
    prior_kinds: dict[str, str] = field(default_factory=dict)
    prior_weight: float = 0.0

    def with_prior(
        self, docs: Sequence[Doc], probs: list[dict[str, float]]
    ) -> list[dict[str, float]]:
        """`probs` (of `docs`) blended with the type prior, when it has one."""
        if self.prior_weight <= 0 or not self.prior_kinds or not docs:
            return probs
        evidence = type_prior.load_prior().known_evidence(docs)
        return [
            type_prior.blend(p, self.prior_kinds, e, self.prior_weight)
            for p, e in zip(probs, evidence, strict=True)
        ]

    def probabilities(
        self, rows: list[tuple[np.ndarray, np.ndarray]], vectors: np.ndarray | None = None
    ) -> list[dict[str, float]]:
        """Each learned label's probability for each featurized row (and embedding row)."""
        if self.head is None:
            return [{} for _ in rows]
        return self._named(self.head.scores(rows), vectors)

    def probabilities_matrix(self, x: Csr, vectors: np.ndarray | None = None) -> list[dict]:
        """The same for a fit-time matrix of many rows (`learn.features.Features.matrix`)."""
        if self.head is None:
            return [{} for _ in range(x.shape[0])]
        return self._named(x.dot(self.head.coef) + self.head.intercept, vectors)

    def _named(self, scores: np.ndarray, vectors: np.ndarray | None) -> list[dict[str, float]]:
        assert self.head is not None
        if self.dense is not None:
            if vectors is None:
                assert self.dense_mean is not None
                vectors = np.tile(self.dense_mean, (len(scores), 1))
            scores = scores + vectors.astype(np.float64) @ self.dense.coef.astype(np.float64)
        proba = self.head.from_scores(scores)
        return [{c: float(p) for c, p in zip(self.classes, row, strict=True)} for row in proba]


def _group_data(
    rows: Sequence[Row], labels: LabelsConfig, group: str, only: Sequence[str] | None = None
) -> tuple[list[int], list[str], list]:
    """(row indices, learned classes, targets) for `group`, or empty classes when not learnable.

    `only`: learn exactly these labels (those present at all): a calibration fold learns the
    final model's labels (`learn/folds.py`).
    """
    allowed = labels.proposable(group)  # type: ignore[arg-type]
    counts = Counter(n for r in rows for n in r.labels if n in allowed)
    classes = sorted(n for n in allowed if counts[n] >= MIN_EXAMPLES)
    if only is not None:
        classes = sorted(n for n in only if counts[n] > 0)
    if group in SINGLE:
        idx, ys = [], []
        for i, r in enumerate(rows):
            mine = [n for n in r.labels if labels.group_of(n) == group]
            if len(mine) == 1 and mine[0] in classes:
                idx.append(i)
                ys.append(mine[0])
        return idx, sorted(set(ys)), ys
    idx = list(range(len(rows)))
    ys = [[1 if c in r.labels else 0 for c in classes] for r in rows]
    return idx, classes, ys


def _learnable(group: str, idx: list[int], classes: list[str], ys: list) -> str | None:
    """Why the group cannot be learned, or None."""
    if group in SINGLE:
        if len(classes) < 2:
            return f"fewer than 2 {group} labels with {MIN_EXAMPLES}+ labelled issues"
        if len(idx) < MIN_ISSUES:
            return f"only {len(idx)} issues with one {group} label, {MIN_ISSUES} needed"
        return None
    if not classes:
        return f"no {group} label with {MIN_EXAMPLES}+ labelled issues"
    positives = sum(1 for y in ys if any(y))
    if positives < MIN_ISSUES:
        article = "an" if group[0] in "aeiou" else "a"
        return f"only {positives} issues with {article} {group} label, {MIN_ISSUES} needed"
    return None


def _fit_groups(
    rows: Sequence[Row],
    labels: LabelsConfig,
    classes: Mapping[str, Sequence[str]] | None = None,
    *,
    vectors: Vectors | None = None,
    fitting: Fitting | None = None,
    prior_weight: float | None = None,
) -> tuple[Featurizer | None, dict[str, GroupModel], Neighbours | None]:
    """The featurizer, each group's fitted classifier (or why not) on `rows` (`classes`: only
    these groups, with exactly these labels) and the rows as neighbours of the learned
    single-label groups' vote.

    `vectors` gives the stored sentence embeddings of issue numbers (None where there is none);
    `fitting` what earlier fits on nearly the same rows can share (see `learn/fitting.py`);
    `prior_weight` the type prior's weight (by default `type_prior.weight` of the type issues).
    """
    if len(rows) < MIN_ISSUES:
        why = f"only {len(rows)} labelled issues, {MIN_ISSUES} needed"
        return None, {g: GroupModel(g, "vote", why) for g in GROUPS}, None
    fitting = fitting if fitting is not None else Fitting()
    with fitting.lock:
        docs = [r.doc for r in rows]
        try:
            feats = fit_features(docs, caches=fitting.caches)
        except ValueError as exc:  # an empty vocabulary, say
            return None, {g: GroupModel(g, "vote", f"no features: {exc}") for g in GROUPS}, None
        x = feats.matrix(docs)
        dense = _dense_rows(vectors, rows)
        space: RowSpace | None = None  # built for the first group that learns
        groups: dict[str, GroupModel] = {}
        gold: dict[str, list[str | None]] = {}
        for group in GROUPS:
            if classes is not None and group not in classes:
                continue
            only = classes[group] if classes is not None else None
            idx, names, ys = _group_data(rows, labels, group, only)
            why = _learnable(group, idx, names, ys)
            if why is not None:
                groups[group] = GroupModel(group, "vote", why, issues=len(idx))
                continue
            if space is None and dense is None and RowSpace.fits(x):
                space = RowSpace(x)
            fitted = heads.fit_group(
                group, x, feats, dense, idx, names, ys, fitting, single=group in SINGLE, space=space
            )
            groups[group] = GroupModel(
                group,
                "learned",
                f"fit on {len(idx)} issues" + (" (with their embeddings)" if fitted.dense else ""),
                names,
                fitted.head,
                issues=len(idx),
                dense=fitted.dense,
                c=fitted.c,
                dense_mean=fitted.dense_mean,
            )
            if group == "type":
                _set_prior(groups[group], labels, len(idx), prior_weight)
            if group in SINGLE:
                gold[group] = [None] * len(rows)
                for i, y in zip(idx, ys, strict=True):
                    gold[group][i] = y
        return feats.featurizer(), groups, Neighbours(x, gold) if gold else None


def _set_prior(gm: GroupModel, labels: LabelsConfig, issues: int, weight: float | None) -> None:
    """Give the type group the shipped prior where two or more of its labels map onto kinds."""
    prior = type_prior.load_prior()
    explicit = {lab.name: lab.kind for lab in labels.type if lab.kind is not None}
    kinds = type_prior.kind_map(gm.classes, prior, explicit)
    w = type_prior.weight(issues) if weight is None else weight
    if not kinds.usable or w <= 0:
        return
    gm.prior_kinds, gm.prior_weight = kinds.kinds, w
    gm.reason += f"; with a general prior of issue kinds at weight {w:.2f}"


def _dense_rows(vectors: Vectors | None, rows: Sequence[Row]) -> np.ndarray | None:
    """The rows' embeddings, or None unless every row has one."""
    if vectors is None:
        return None
    got = [vectors(r.number) for r in rows]
    if any(v is None for v in got):
        return None
    return np.vstack(got).astype(np.float64)


@dataclass
class LabelModel:
    """Every group's model, fit on the issues created before `cutoff`."""

    cutoff: datetime
    fingerprint: str
    issues: int
    groups: dict[str, GroupModel]
    featurizer: Featurizer | None
    fit_seconds: float = 0.0
    indexed: int = 0
    # The training rows of the vote, kept while a group proposes from it (or in a fold).
    neighbours: Neighbours | None = None
    # Which model answered (`learn/store.py`: the saved one, one kept for an earlier moment, one
    # fit now); None where that is not told (evaluate's buckets).
    origin: str | None = None

    def mode(self, group: str) -> str:
        g = self.groups.get(group)
        return g.mode if g else "vote"

    @property
    def uses_embeddings(self) -> bool:
        return any(g.dense is not None for g in self.groups.values())

    def probabilities_many(
        self, docs: Sequence[Doc], vectors: np.ndarray | None = None
    ) -> list[dict[str, dict]]:
        """Per doc (`Doc`), per learned group, each label's probability; `vectors`
        (one embedding row per doc) feed the groups' embedding heads."""
        if self.featurizer is None or not docs:
            return [{} for _ in docs]
        x = self.featurizer.rows(docs)
        out: list[dict[str, dict]] = [{} for _ in docs]
        for group, gm in self.groups.items():
            if gm.mode != "learned":
                continue
            probs = gm.with_prior(docs, gm.probabilities(x, vectors))
            if gm.source != "model" and self.neighbours is not None:
                shares = self.neighbours.label_shares(group, rows_matrix(x, self.featurizer.width))
                probs = [mix(p, v, SOURCES[gm.source]) for p, v in zip(probs, shares, strict=True)]
            for i, p in enumerate(probs):
                out[i][group] = p
        return out

    def probabilities(
        self, issue: Issue, vector: np.ndarray | None = None
    ) -> dict[str, dict[str, float]]:
        """Per learned group, each learned label's probability for `issue` (and its embedding,
        which the embedding heads read when the model has them)."""
        vectors = vector.reshape(1, -1) if vector is not None else None
        return self.probabilities_many([fields(issue)], vectors)[0]

    def predict_rows(
        self, rows: Sequence[Row], vectors: Vectors | None = None
    ) -> dict[str, list[dict[str, float]]]:
        """Per learned group, each row's label probabilities from the model, and with the
        neighbours kept, a single-label group's neighbour label shares under f"{group}{NEIGHBOURS}"
        (a fold model scoring its rows; the fit's own features in memory make them for all rows at
        once)."""
        learned = {g: gm for g, gm in self.groups.items() if gm.mode == "learned"}
        if self.featurizer is None:
            return {g: [{} for _ in rows] for g in learned}
        docs = [r.doc for r in rows]
        dense = _dense_rows(vectors, rows)
        if self.featurizer.fitted is not None:
            x = self.featurizer.fitted.matrix(docs)
            out = {g: gm.probabilities_matrix(x, dense) for g, gm in learned.items()}
        else:
            rows_x = self.featurizer.rows(docs)
            out = {g: gm.probabilities(rows_x, dense) for g, gm in learned.items()}
            x = rows_matrix(rows_x, self.featurizer.width)
        for g, gm in learned.items():
            if gm.prior_weight > 0 and gm.prior_kinds:
                out[g + WITHOUT_PRIOR] = out[g]
                out[g] = gm.with_prior(docs, out[g])
        if self.neighbours is not None:
            for g in learned:
                if g in self.neighbours.gold:
                    out[g + NEIGHBOURS] = self.neighbours.label_shares(g, x)
        return out

    def describe(self) -> str:
        dense = "; TF-IDF and sentence embeddings" if self.uses_embeddings else ""
        return (
            f"fit on {self.issues} labelled issues created before {self.cutoff:%Y-%m-%d %H:%M} "
            f"UTC (data {self.fingerprint}{dense})"
        )


def fit(
    rows: Sequence[Row],
    labels: LabelsConfig,
    cutoff: datetime,
    *,
    calibrate: bool = True,
    classes: Mapping[str, Sequence[str]] | None = None,
    vectors: Vectors | None = None,
    fitting: Fitting | None = None,
    prior_weight: float | None = None,
) -> LabelModel:
    """Fit every group on `rows` created before `cutoff` (the most recent `MAX_ROWS` of them),
    with out-of-fold tables and curves (`learn/folds.py`). `classes`: fit only these groups, on
    exactly these labels.

    `vectors` (issue number -> stored embedding, or None) adds the embedding block when every
    row has one; `fitting` shares work with other fits on nearly the same rows (the folds here,
    evaluate's buckets); `prior_weight` sets the type prior's weight (the folds are given the
    final model's).
    """
    start = time.perf_counter()
    rows = [r for r in rows if r.created_at < cutoff][-MAX_ROWS:]
    fitting = fitting if fitting is not None else Fitting()
    feats, groups, neighbours = _fit_groups(
        rows, labels, classes, vectors=vectors, fitting=fitting, prior_weight=prior_weight
    )
    learned = {g: gm.classes for g, gm in groups.items() if gm.mode == "learned"}
    if calibrate and feats is not None and learned:
        weight = groups["type"].prior_weight if "type" in groups else 0.0

        def fit_fold(train: Sequence[Row], names: Mapping[str, Sequence[str]]) -> Predict:
            fold = fit(
                train,
                labels,
                cutoff,
                calibrate=False,
                classes=names,
                vectors=vectors,
                fitting=fitting,
                prior_weight=weight,
            )
            return lambda test: fold.predict_rows(test, vectors)

        # The folds reuse each group's C (chosen by cross-validation on these rows): choosing it
        # again inside every fold would cost a dozen fits per fold for one number of four.
        fitting.pinned = True
        try:
            got = collect(rows, labels, learned, fit_fold)
        finally:
            fitting.pinned = False
        for group, names in learned.items():
            preds = got.predictions.get(group)
            if not preds:
                continue
            plain = got.predictions.get(group + WITHOUT_PRIOR)
            if plain is not None:
                preds = _choose_prior(groups[group], names, preds, plain)
            shares = got.predictions.get(group + NEIGHBOURS)
            if shares is not None:
                preds = _choose_source(groups[group], names, preds, shares)
            groups[group].table = got.table(group, labels, preds)
    if neighbours is not None and not (calibrate is False and classes is not None):
        # Kept by a fold (its vote is measured), else only for the groups proposing from it.
        voting = [g for g, gm in groups.items() if gm.source != "model"]
        neighbours = neighbours.only(voting) if voting else None
    return LabelModel(
        cutoff=cutoff,
        fingerprint=fingerprint(rows, labels),
        issues=len(rows),
        groups=groups,
        featurizer=feats,
        fit_seconds=time.perf_counter() - start,
        neighbours=neighbours,
    )


def _choose_prior(
    gm: GroupModel, names: Sequence[str], preds: Predictions, plain: Predictions
) -> Predictions:
    """Keep the type prior unless, out of fold, the model alone is surely better
    (`neighbours.surely_better`); the predictions of what is kept."""
    with_prior, without = macro_f1(preds, names), macro_f1(plain, names)
    gm.sources["prior"], gm.sources["without prior"] = round(with_prior, 4), round(without, 4)
    if not surely_better(plain, preds, names):
        return preds
    gm.prior_weight, gm.prior_kinds = 0.0, {}
    gm.reason += " (dropped: the model alone was better out of fold)"
    return plain


def _choose_source(
    gm: GroupModel, names: Sequence[str], preds: Predictions, shares: Predictions
) -> Predictions:
    """Set what `gm` proposes from, on its out-of-fold predictions (the model's, the vote's);
    the chosen source's predictions, which its tiers are measured on."""
    by_source = {
        name: [(mix(p, v, share), gold) for (p, gold), (v, _) in zip(preds, shares, strict=True)]
        for name, share in SOURCES.items()
    }
    gm.source, scores = choose_source(by_source, names)
    gm.sources = {**gm.sources, **scores}
    if gm.source != "model":
        said = {"vote": "the vote of the most similar of them", "blend": "the model and that vote"}
        gm.reason += f"; proposes from {said[gm.source]} (better out of fold)"
    return by_source[gm.source]
