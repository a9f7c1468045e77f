"""The learned label model: per label group, a linear classifier over the repository's own history.

`type` and `priority` are single-label (one multiclass classifier over the issues with exactly one
label of the group); `area` and `topic` are multi-label (one-vs-rest over every triaged issue, so
silence is a vote for none). A label with fewer than `MIN_EXAMPLES` labelled issues is not learned;
a group with fewer than `MIN_ISSUES` labelled issues (or fewer than two learned types) is not
learned at all and the engine falls back to the neighbour vote for it.

scikit-learn fits; the fitted model is kept as numpy arrays (`learn/linear.py`), so answering an
issue never imports scikit-learn.
"""

from __future__ import annotations

import hashlib
import time
import warnings
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

import numpy as np

from issue_assistant.config import GROUPS, LabelsConfig
from issue_assistant.index import IssueIndex
from issue_assistant.learn.calibration import ThresholdTable
from issue_assistant.learn.folds import Predict, out_of_fold
from issue_assistant.learn.linear import Featurizer, LinearHead, compile_featurizer, compile_head
from issue_assistant.learn.text import fields, prose, title
from issue_assistant.tracker.base import Tracker
from issue_assistant.tracker.models import Issue

MIN_EXAMPLES = 5
MIN_ISSUES = 30
SINGLE = ("type", "priority")


@dataclass(frozen=True)
class Row:
    """One labelled issue as the model learns from it."""

    number: int
    created_at: datetime
    title: str
    prose: str
    labels: frozenset[str]


def rows_from(tracker: Tracker, labels: LabelsConfig, before: datetime) -> list[Row]:
    """Issues created before `before` that carry a label of labels.toml, oldest first.

    Read through the tracker given (an as-of view in evaluate and analyze), so the labels are the
    ones known at that view's moment.
    """
    out: list[Row] = []
    for issue in tracker.all_issues():
        if issue.is_pull_request or issue.created_at >= before:
            continue
        mine = frozenset(labels.known(issue.labels))
        if mine:
            title, prose = fields(issue)
            out.append(Row(issue.number, issue.created_at, title, prose, mine))
    out.sort(key=lambda r: (r.created_at, r.number))
    return out


def fingerprint(rows: Sequence[Row], labels: LabelsConfig) -> str:
    """What the model was fit on: every row's number, time and labels, and the label set."""
    h = hashlib.sha1()
    for g in GROUPS:
        h.update(f"{g}:{','.join(labels.proposable(g))};".encode())  # type: ignore[arg-type]
    for r in rows:
        h.update(f"{r.number}|{r.created_at.isoformat()}|{','.join(sorted(r.labels))}\n".encode())
    return h.hexdigest()[:16]


@dataclass
class GroupModel:
    """One group's classifier (None when the group falls back to the vote) and its CV table."""

    group: str
    mode: str  # "learned" or "vote"
    reason: str
    classes: list[str] = field(default_factory=list)
    head: LinearHead | None = None
    issues: int = 0
    table: ThresholdTable | None = None

    def probabilities(self, rows: list[tuple[np.ndarray, np.ndarray]]) -> list[dict[str, float]]:
        """Each learned label's probability for each featurized row."""
        if self.head is None:
            return [{} for _ in rows]
        proba = self.head.probabilities(rows)
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
        return idx, classes, ys
    idx = list(range(len(rows)))
    ys = [[1 if c in r.labels else 0 for c in classes] for r in rows]
    return idx, classes, ys


def _estimator(group: str) -> object:
    from sklearn.linear_model import SGDClassifier
    from sklearn.multiclass import OneVsRestClassifier

    if group in SINGLE:
        return SGDClassifier(
            loss="log_loss",
            alpha=2e-5,
            class_weight="balanced",
            max_iter=50,
            tol=None,
            random_state=0,
        )
    base = SGDClassifier(loss="log_loss", alpha=2e-5, max_iter=50, tol=None, random_state=0)
    return OneVsRestClassifier(base)


def _learnable(group: str, idx: list[int], classes: list[str], ys: list) -> str | None:
    """Why the group cannot be learned, or None."""
    if group in SINGLE:
        if len(classes) < 2:
            return f"fewer than 2 {group} labels with {MIN_EXAMPLES}+ labelled issues"
        if len(idx) < MIN_ISSUES:
            return f"only {len(idx)} issues with one {group} label (needs {MIN_ISSUES})"
        if len(set(ys)) < 2:
            return f"only one {group} label in the history"
        return None
    if not classes:
        return f"no {group} label with {MIN_EXAMPLES}+ labelled issues"
    positives = sum(1 for y in ys if any(y))
    if positives < MIN_ISSUES:
        return f"only {positives} issues with a {group} label (needs {MIN_ISSUES})"
    return None


def _fit_groups(
    rows: Sequence[Row], labels: LabelsConfig, classes: Mapping[str, Sequence[str]] | None = None
) -> tuple[Featurizer | None, dict[str, GroupModel]]:
    """The featurizer and each group's fitted classifier (or why not) on `rows` (`classes`: only
    these groups, with exactly these labels)."""
    if len(rows) < MIN_ISSUES:
        why = f"only {len(rows)} labelled issues (needs {MIN_ISSUES})"
        return None, {g: GroupModel(g, "vote", why) for g in GROUPS}
    from issue_assistant.learn.features import featurizer, matrix

    fitted = featurizer()
    try:
        x = fitted.fit_transform(matrix([(r.title, r.prose) for r in rows]))
    except ValueError as exc:  # an empty vocabulary, say
        return None, {g: GroupModel(g, "vote", f"no features: {exc}") for g in GROUPS}
    feats = compile_featurizer(fitted)
    groups: dict[str, GroupModel] = {}
    for group in GROUPS:
        if classes is not None and group not in classes:
            continue
        only = classes[group] if classes is not None else None
        idx, names, ys = _group_data(rows, labels, group, only)
        why = _learnable(group, idx, names, ys)
        if why is not None:
            groups[group] = GroupModel(group, "vote", why, issues=len(idx))
            continue
        est = _estimator(group)
        y = np.array(ys)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(x[idx], y)  # type: ignore[attr-defined]
        if group in SINGLE:
            names = [str(c) for c in est.classes_]  # type: ignore[attr-defined]
        head = compile_head(est, feats.width)
        groups[group] = GroupModel(
            group, "learned", f"fit on {len(idx)} issues", names, head, issues=len(idx)
        )
    return feats, groups


@dataclass
class LabelModel:
    """Every group's model, fit on the issues created before `cutoff`."""

    cutoff: datetime
    fingerprint: str
    issues: int
    groups: dict[str, GroupModel]
    featurizer: Featurizer | None
    sklearn_version: str = ""
    fit_seconds: float = 0.0
    indexed: int = 0

    def mode(self, group: str) -> str:
        g = self.groups.get(group)
        return g.mode if g else "vote"

    def probabilities_many(self, docs: Sequence[tuple[str, str]]) -> list[dict[str, dict]]:
        if self.featurizer is None or not docs:
            return [{} for _ in docs]
        x = self.featurizer.rows(docs)
        out: list[dict[str, dict]] = [{} for _ in docs]
        for group, gm in self.groups.items():
            if gm.mode != "learned":
                continue
            for i, probs in enumerate(gm.probabilities(x)):
                out[i][group] = probs
        return out

    def predict_rows(self, rows: Sequence[Row]) -> dict[str, list[dict[str, float]]]:
        """Per learned group, each row's label probabilities (a fold model scoring its rows)."""
        probs = self.probabilities_many([(r.title, r.prose) for r in rows])
        learned = [g for g, gm in self.groups.items() if gm.mode == "learned"]
        return {g: [p.get(g, {}) for p in probs] for g in learned}

    def probabilities(self, issue: Issue) -> dict[str, dict[str, float]]:
        """Per learned group, each learned label's probability for `issue`."""
        return self.probabilities_many([fields(issue)])[0]

    def describe(self) -> str:
        return (
            f"fit on {self.issues} labelled issues created before {self.cutoff:%Y-%m-%d %H:%M} "
            f"UTC (data {self.fingerprint})"
        )


def fit(
    rows: Sequence[Row],
    labels: LabelsConfig,
    cutoff: datetime,
    *,
    calibrate: bool = True,
    classes: Mapping[str, Sequence[str]] | None = None,
) -> LabelModel:
    """Fit every group on `rows` (all created before `cutoff`), with out-of-fold tables and
    curves (`learn/folds.py`). `classes`: fit only these groups, on exactly these labels."""
    start = time.perf_counter()
    rows = [r for r in rows if r.created_at < cutoff]
    feats, groups = _fit_groups(rows, labels, classes)
    learned = {g: gm.classes for g, gm in groups.items() if gm.mode == "learned"}
    if calibrate and feats is not None and learned:

        def fit_fold(train: Sequence[Row], names: Mapping[str, Sequence[str]]) -> Predict:
            return fit(train, labels, cutoff, calibrate=False, classes=names).predict_rows

        for group, table in out_of_fold(rows, labels, learned, fit_fold).items():
            groups[group].table = table
    import sklearn

    return LabelModel(
        sklearn_version=sklearn.__version__,
        cutoff=cutoff,
        fingerprint=fingerprint(rows, labels),
        issues=len(rows),
        groups=groups,
        featurizer=feats,
        fit_seconds=time.perf_counter() - start,
    )


def rows_from_index(index: IssueIndex, labels: LabelsConfig, before: datetime) -> list[Row]:
    """The same rows from the index's stored documents (live: no request per issue)."""
    out = []
    for hit in index.issues_before(before):
        mine = frozenset(labels.known(list(hit.labels)))
        if mine:
            at = hit.created_at if hit.created_at.tzinfo else hit.created_at.replace(tzinfo=UTC)
            out.append(Row(hit.number, at, title(hit.title), prose(hit.body), mine))
    out.sort(key=lambda r: (r.created_at, r.number))
    return out
