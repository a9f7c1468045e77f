"""The labelled issues a label model learns from: one `Row` per issue, read through a tracker as of
a moment or from the index's stored documents, and the fingerprint of what a fit read."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np

from issue_assistant.config.labels import GROUPS, LabelsConfig
from issue_assistant.index import IssueIndex
from issue_assistant.learn.form_terms import form_text
from issue_assistant.learn.text import Doc, fields, prose, title
from issue_assistant.tracker.asof import rewind
from issue_assistant.tracker.base import Tracker
from issue_assistant.tracker.models import Issue

# issue number -> its stored sentence embedding (None when it has none)
Vectors = Callable[[int], "np.ndarray | None"]


@dataclass(frozen=True)
class Row:
    """One labelled issue as the model learns from it."""

    number: int
    created_at: datetime
    title: str
    prose: str
    labels: frozenset[str]
    form: str = ""  # the body's template or form terms (`learn/form_terms.py`)

    @property
    def doc(self) -> Doc:
        """What the features read: (title, prose, form terms)."""
        return self.title, self.prose, self.form


def rows_from(
    tracker: Tracker, labels: LabelsConfig, before: datetime, newest: int | None = None
) -> list[Row]:
    """Issues created before `before` that carry a label of labels.toml, oldest first (only the
    `newest` of them when given: what a fit reads, `learn.model.MAX_ROWS`).

    Read through the tracker given (an as-of view in evaluate and analyze), so the labels are the
    ones known at that view's moment. With `newest`, issues are read newest first and the reading
    stops once that many are found (through an as-of view, each read rewinds an issue).
    """
    known: dict[tuple[str, ...], frozenset[str]] = {}
    found: list[tuple[datetime, int, Issue, frozenset[str]]] = []
    for issue in _issues_before(tracker, before, newest_first=newest is not None):
        names = tuple(issue.labels)
        mine = known.get(names)
        if mine is None:
            mine = known[names] = frozenset(labels.known(issue.labels))
        if mine:
            found.append((issue.created_at, issue.number, issue, mine))
            if newest is not None and len(found) >= newest:
                break
    found.sort(key=lambda f: (f[0], f[1]))
    out = []
    for created, number, issue, mine in found:  # the text only for the rows kept
        title, prose, form = fields(issue)
        out.append(Row(number, created, title, prose, mine, form))
    return out


def _issues_before(tracker: Tracker, before: datetime, newest_first: bool) -> Iterator[Issue]:
    """The tracker's issues (no pull requests) created before `before`, in the tracker's order or
    newest first; through an as-of view, each is rewound only when read (and pull requests never
    are: most records of a repository)."""
    view = tracker.point_in_time
    source = view.source if view is not None else tracker
    issues: Iterable[Issue] = (
        i
        for i in source.all_issues()
        if not i.is_pull_request
        and i.created_at < before
        and (view is None or (i.created_at <= view.moment and i.number != view.hide))
    )
    if newest_first:
        issues = sorted(issues, key=lambda i: (i.created_at, i.number), reverse=True)
    if view is None:
        yield from issues
        return
    repository = view.repository.full_name
    for issue in issues:
        yield rewind(issue, view.moment, repository)


def fingerprint(rows: Sequence[Row], labels: LabelsConfig) -> str:
    """What the model was fit on: every row's number, time and labels, and the label set."""
    h = hashlib.sha1()
    for g in GROUPS:
        h.update(f"{g}:{','.join(labels.proposable(g))};".encode())  # type: ignore[arg-type]
    for r in rows:
        h.update(f"{r.number}|{r.created_at.isoformat()}|{','.join(sorted(r.labels))}\n".encode())
    return h.hexdigest()[:16]


def index_vectors(index: IssueIndex | None) -> Vectors | None:
    """The index's stored sentence embeddings by issue number, or None without embeddings (or
    without an index)."""
    store = index.sentences if index is not None else None
    if store is None or not len(store):
        return None
    return store.vector


def rows_from_index(index: IssueIndex, labels: LabelsConfig, before: datetime) -> list[Row]:
    """The same rows from the index's stored documents (live: no request per issue)."""
    out = []
    for hit in index.issues_before(before):
        mine = frozenset(labels.known(list(hit.labels)))
        if mine:
            at = hit.created_at if hit.created_at.tzinfo else hit.created_at.replace(tzinfo=UTC)
            out.append(
                Row(hit.number, at, title(hit.title), prose(hit.body), mine, form_text(hit.body))
            )
    out.sort(key=lambda r: (r.created_at, r.number))
    return out
