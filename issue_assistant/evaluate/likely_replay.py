"""The likely-files benchmark: replay each fixed issue at its moment, score every signal.

`replay` computes, for each `Fix` of the ground truth (`evaluate.fixes`), every signal of
`likely.signals` on the code as it was (a clone's commit, read from git objects), and keeps them
as `Row`s; `Table` scores signals alone, any weighted combination (`likely.rank.combine`), and
the weights fitted on older issues (`fit_weights`): file accuracy @1/@5/@10 and MRR, for
source files alone or with tests and docs, and function-level.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from issue_assistant.evaluate.files import RankScores, rank_scores
from issue_assistant.evaluate.fixes import Fix
from issue_assistant.likely.checkout import file_kind
from issue_assistant.likely.code_git import CommitIndexes
from issue_assistant.likely.fix_history import FixHistory, PastFix
from issue_assistant.likely.rank import Ranked, Weights, all_hints, combine, function_at
from issue_assistant.likely.signals import SIGNALS, Hint
from issue_assistant.tracker.base import Tracker

ALL_KINDS = ("source", "test", "doc")


@dataclass
class Row:
    """One replayed issue: every signal's hints at its moment, and what the fix changed."""

    issue: int
    opened: datetime
    commit: str
    hints: dict[str, list[Hint]]
    kinds: dict[str, str]  # hinted path -> kind
    truth: dict[str, list[str]]  # "source", "all", "functions" -> paths (path::function)
    present: list[str]  # the truth files (any kind) the index at the moment holds
    latency: float  # seconds for all the signals (the index built)
    files: int  # files indexed at the moment
    functions: dict[tuple[str, int], str | None] = field(default_factory=dict)


def history_of(tracker: Tracker, fixes: Iterable[Fix]) -> FixHistory:
    """Every fix as history, known from its merge: each replayed issue sees those before it."""
    past = []
    for f in fixes:
        issue = tracker.get_issue(f.issue)
        files = tuple(f.paths(ALL_KINDS))
        past.append(PastFix(f.issue, issue.title, issue.body or "", f.merged, files))
    return FixHistory(past)


def replay(
    tracker: Tracker,
    fixes: Sequence[Fix],
    clone: str,
    *,
    at: str = "moment",
    project: str = "",
    history: FixHistory | None = None,
    extra: Callable[[object, str], dict[str, list[Hint]]] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[list[Row], list[tuple[str, float, int]]]:
    """Rows for `fixes` at their moment (`at="parent"`: the fix's parent), in time order, and
    each index build (commit, seconds, files). A fresh index per commit: exact, not moved."""
    history = history if history is not None else history_of(tracker, fixes)
    indexes = CommitIndexes(clone, keep=1)
    order = sorted(fixes, key=lambda f: f.opened if at == "moment" else f.merged)
    rows: list[Row] = []
    builds: list[tuple[str, float, int]] = []
    try:
        for n, fix in enumerate(order, start=1):
            sha = fix.moment if at == "moment" else fix.parent
            t = time.perf_counter()
            code = indexes.at(sha)
            builds.append((sha, time.perf_counter() - t, len(code)))
            issue = tracker.get_issue(fix.issue)
            t = time.perf_counter()
            hints = all_hints(
                code,
                issue.title,
                issue.body or "",
                project=project,
                history=history,
                before=fix.opened,
                number=fix.issue,
            )
            latency = time.perf_counter() - t
            if extra is not None:
                hints |= extra(code, issue.text)
            rows.append(_row(fix, sha, code, hints, latency))
            if progress is not None:
                progress(n, len(order))
    finally:
        indexes.close()
    return rows, builds


def _row(fix: Fix, sha: str, code, hints: dict[str, list[Hint]], latency: float) -> Row:  # noqa: ANN001
    functions: dict[tuple[str, int], str | None] = {}
    for hs in hints.values():
        for h in hs[:10]:
            if h.line is not None and (h.path, h.line) not in functions:
                functions[(h.path, h.line)] = function_at(code, h.path, h.line, h.function)
    everything = fix.paths(ALL_KINDS)
    return Row(
        issue=fix.issue,
        opened=fix.opened,
        commit=sha,
        hints={s: hs[:50] for s, hs in hints.items()},
        kinds={h.path: file_kind(h.path) for hs in hints.values() for h in hs},
        truth={
            "source": fix.paths(("source",)),
            "all": everything,
            "functions": fix.functions(("source",)),
        },
        present=[p for p in everything if p in code.files],
        latency=latency,
        files=len(code),
        functions=functions,
    )


class Table:
    """Rows scored under one kind filter ("source": tests and docs are never predicted, and the
    truth is the fix's source files; else every kind, against every file the fix changed)."""

    def __init__(self, rows: Sequence[Row], kinds: Sequence[str] = ("source",)) -> None:
        self.rows = list(rows)
        self.kinds = tuple(kinds)
        wanted = set(self.kinds)
        self._keep = [{p for p, k in r.kinds.items() if k in wanted} for r in self.rows]

    def truth(self, row: Row) -> list[str]:
        return row.truth["source"] if self.kinds == ("source",) else row.truth["all"]

    def ranked(self, i: int, weights: Weights, limit: int = 10) -> list[Ranked]:
        return combine(self.rows[i].hints, weights, limit, self._keep[i])

    def scores(self, weights: Weights, subset: Sequence[int] | None = None) -> RankScores:
        picked = range(len(self.rows)) if subset is None else subset
        return rank_scores(
            ([r.path for r in self.ranked(i, weights)], self.truth(self.rows[i])) for i in picked
        )

    def signal_alone(self, signal: str, subset: Sequence[int] | None = None) -> RankScores:
        """One signal's own order (a hint list, also the extra ones), with the kind filter."""
        picked = range(len(self.rows)) if subset is None else subset
        pairs = []
        for i in picked:
            r = self.rows[i]
            listed = [h.path for h in r.hints.get(signal, []) if h.path in self._keep[i]]
            pairs.append((list(dict.fromkeys(listed))[:10], self.truth(r)))
        return rank_scores(pairs)

    def function_scores(self, weights: Weights) -> RankScores:
        """Function-level: the function at each predicted file's line (its frame's function,
        or the one defining the matched identifier), against the functions the fix touched."""
        pairs = []
        for i, row in enumerate(self.rows):
            if not row.truth["functions"]:
                continue
            named = []
            for r in self.ranked(i, weights):
                fn = row.functions.get((r.path, r.line)) if r.line is not None else None
                if fn:
                    named.append(f"{r.path}::{fn}")
            pairs.append((named, row.truth["functions"]))
        return rank_scores(pairs)


def halves(rows: Sequence[Row]) -> tuple[list[int], list[int]]:
    """The older and the newer half of the rows (by when the issue was opened)."""
    order = sorted(range(len(rows)), key=lambda i: rows[i].opened)
    mid = len(order) // 2
    return order[:mid], order[mid:]


GRID = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0)


def fit_weights(
    table: Table,
    subset: Sequence[int],
    rounds: int = 3,
    seen: dict[Weights, tuple[float, float]] | None = None,
) -> Weights:
    """Coordinate ascent over `GRID` for each signal's weight, maximising accuracy@5 (then MRR)
    on `subset` only (the older issues: the newer half is scored with what they taught).
    `seen` gets every weighting tried, with its (accuracy@5, MRR)."""
    best = Weights()
    tried = seen if seen is not None else {}

    def value(w: Weights) -> tuple[float, float]:
        if w not in tried:
            s = table.scores(w, subset)
            tried[w] = (s.at5.share or 0.0, s.mrr or 0.0)
        return tried[w]

    current = value(best)
    for _ in range(rounds):
        moved = False
        for signal in SIGNALS:
            for v in GRID:
                trial = replace(best, **{signal: v})
                got = value(trial)
                if got > current:
                    best, current, moved = trial, got, True
        trial = replace(best, named_first=not best.named_first)
        got = value(trial)
        if got > current:
            best, current, moved = trial, got, True
        if not moved:
            break
    return best
