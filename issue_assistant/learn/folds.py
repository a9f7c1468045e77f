"""Out-of-fold predictions for calibration: folds that never score a label the fold could not learn.

Rule (also in docs/configuration.md):
- A history of at least `TIME_ORDERED_MIN` labelled issues uses time-ordered folds (fit on the
  oldest 40%, 60%, 80%, score the next 20%), as the model is used: on issues newer than its
  history; but only when they are class-complete: every fold's training part holds every label
  of the single-label groups that the final model learns, `FOLD_MIN_EXAMPLES` times (or as often
  as the whole history does). A multi-label group's labels are independent (one-vs-rest): each
  is scored only in the folds whose training part holds it that often.
- Otherwise stratified shuffled folds with a fixed seed, `K` of them below `TIME_ORDERED_MIN`
  (`K_LARGE` at or above, where each still trains on 660 or more): each issue is dealt to a
  fold by its rarest learned label, so each training part holds about (k-1)/k of every label,
  and every label with two or more issues.
- Each fold model learns exactly the labels the final model learns. An issue whose label its
  fold's training part does not hold at all (a label with a single issue) is not scored.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from issue_assistant.config.labels import GROUPS, LabelsConfig
from issue_assistant.learn.confidence import ThresholdTable, fold_bounds, table_for

TIME_ORDERED_MIN = 1000
K = 5
K_LARGE = 3
FOLD_MIN_EXAMPLES = 3
SEED = 0
SINGLE = ("type", "priority")


# fit_fold(training rows, the final model's learned labels per group) -> predict, where
# predict(test rows) gives, per group the fold model learned, each row's label probabilities.
Predict = Callable[[Sequence[Any]], Mapping[str, list[dict[str, float]]]]
FitFold = Callable[[Sequence[Any], Mapping[str, Sequence[str]]], Predict]


def gold_of(row: Any, labels: LabelsConfig, group: str) -> list[str]:
    return [n for n in row.labels if labels.group_of(n) == group]


def _counts(rows: Sequence[Any], labels: LabelsConfig, group: str) -> Counter[str]:
    """Per label of `group`, the issues that teach it (single-label: those with it alone)."""
    out: Counter[str] = Counter()
    for r in rows:
        gold = gold_of(r, labels, group)
        if group in SINGLE and len(gold) != 1:
            continue
        out.update(gold)
    return out


def complete(train: Sequence[Any], labels: LabelsConfig, group: str, need: Counter[str]) -> bool:
    """Whether `train` holds every label of `need` at least min(FOLD_MIN_EXAMPLES, need) times."""
    counts = _counts(train, labels, group)
    return all(counts[c] >= min(FOLD_MIN_EXAMPLES, n) for c, n in need.items())


def _need(
    rows: Sequence[Any], labels: LabelsConfig, group: str, names: Sequence[str]
) -> Counter[str]:
    counts = _counts(rows, labels, group)
    return Counter({c: counts[c] for c in names if counts[c] > 0})


def stratified(rows: Sequence[Any], classes: Mapping[str, Sequence[str]], k: int = K) -> list[int]:
    """Each row's fold (0..k-1): rows dealt round-robin by their rarest learned label."""
    learned = {c for names in classes.values() for c in names}
    freq = Counter(n for r in rows for n in r.labels if n in learned)
    by_key: dict[str, list[int]] = {}
    for i, r in enumerate(rows):
        mine = sorted((n for n in r.labels if n in learned), key=lambda n: (freq[n], n))
        by_key.setdefault(mine[0] if mine else "", []).append(i)
    rnd = random.Random(SEED)
    fold = [0] * len(rows)
    dealt = 0
    for key in sorted(by_key, key=lambda n: (freq.get(n, 0), n)):
        members = by_key[key]
        rnd.shuffle(members)
        for j, i in enumerate(members):
            fold[i] = (dealt + j) % k
        dealt += len(members)
    return fold


def plan(
    rows: Sequence[Any], labels: LabelsConfig, classes: Mapping[str, Sequence[str]]
) -> tuple[str, list[tuple[list[int], list[int]]]]:
    """The method and the (train indices, test indices) of each fold."""
    n = len(rows)
    if n >= TIME_ORDERED_MIN:
        need = {g: _need(rows, labels, g, names) for g, names in classes.items()}
        folds = [(list(range(a)), list(range(a, b))) for a, b in fold_bounds(n)]
        if all(
            complete([rows[i] for i in train], labels, g, need[g])
            for train, _ in folds
            for g in classes
            if g in SINGLE
        ):
            return "time-ordered", folds
    k = K if n < TIME_ORDERED_MIN else K_LARGE
    fold = stratified(rows, classes, k)
    out = []
    for f in range(k):
        test = [i for i in range(n) if fold[i] == f]
        if test:
            out.append(([i for i in range(n) if fold[i] != f], test))
    return "stratified", out


#: a fold's predictions under f"{group}{NEIGHBOURS}": its neighbours' label shares (the vote)
NEIGHBOURS = ":vote"
#: ... under f"{group}{WITHOUT_PRIOR}": its model's probabilities without the type prior
WITHOUT_PRIOR = ":without prior"
EXTRA = (NEIGHBOURS, WITHOUT_PRIOR)


@dataclass
class Collected:
    """The out-of-fold predictions, (probabilities, gold labels) per scored issue, by group (and
    by f"{group}{suffix}" for what a fold gave beside its model, `EXTRA`), and how they were
    made."""

    method: str
    folds: int
    skipped: Counter[str]
    predictions: dict[str, list[tuple[dict[str, float], list[str]]]]

    def table(
        self, group: str, labels: LabelsConfig, preds: Sequence[tuple[dict[str, float], list[str]]]
    ) -> ThresholdTable:
        """The table and curves of `preds`, `group`'s predictions (of any source)."""
        table = table_for(preds, single=group in SINGLE, limit=labels.limit(group))  # type: ignore[arg-type]
        return table.model_copy(
            update={
                "method": self.method,
                "folds": self.folds,
                "skipped_folds": self.skipped[group],
            }
        )


def collect(
    rows: Sequence[Any],
    labels: LabelsConfig,
    classes: Mapping[str, Sequence[str]],
    fit_fold: FitFold,
) -> Collected:
    """Every fold's predictions for the learned groups (`classes`: their learned labels), the
    vote's and the model's without the prior too where a fold gives them; an issue is scored
    alike for every source."""
    method, folds = plan(rows, labels, classes)
    need = {g: _need(rows, labels, g, names) for g, names in classes.items()}
    predictions: dict[str, list[tuple[dict[str, float], list[str]]]] = {}
    skipped: Counter[str] = Counter()
    for train_idx, test_idx in folds:
        train = [rows[i] for i in train_idx]
        test = [rows[i] for i in test_idx]
        predicted = fit_fold(train, classes)(test)
        for group, names in classes.items():
            probs = predicted.get(group)
            if probs is None:  # the fold could not learn the group at all
                skipped[group] += 1
                continue
            extra = {s: predicted[group + s] for s in EXTRA if group + s in predicted}
            held = _counts(train, labels, group)
            # A multi-label group's labels are scored apart: each only in the folds whose
            # training part holds it enough (a time-ordered fold may precede a label).
            scored = {c for c in names if held[c] >= min(FOLD_MIN_EXAMPLES, need[group][c])}
            for i, (r, mine) in enumerate(zip(test, probs, strict=True)):
                gold = gold_of(r, labels, group)
                if group in SINGLE:
                    if len(gold) != 1 or any(g in names and not held[g] for g in gold):
                        continue  # a label this fold never saw: it could not be right
                else:
                    mine = {c: v for c, v in mine.items() if c in scored}
                    gold = [g for g in gold if g in scored or g not in names]
                predictions.setdefault(group, []).append((mine, gold))
                for suffix, other in extra.items():
                    predictions.setdefault(group + suffix, []).append((other[i], gold))
    return Collected(method, len(folds), skipped, predictions)


def out_of_fold(
    rows: Sequence[Any],
    labels: LabelsConfig,
    classes: Mapping[str, Sequence[str]],
    fit_fold: FitFold,
) -> dict[str, ThresholdTable]:
    """Per learned group (`classes`: its learned labels), the table and curves of its
    model's out-of-fold predictions."""
    got = collect(rows, labels, classes, fit_fold)
    return {
        group: got.table(group, labels, got.predictions[group])
        for group in GROUPS
        if got.predictions.get(group)
    }
