"""Candidate originals for an issue: BM25 and dense retrieval fused by reciprocal rank.

The one interface engines and the context use (`Retriever.candidates`), so nothing else reaches
into tantivy. Candidates are issues only, created before the new one and before the moment,
read from the index's stored records and rewound to the moment; an issue already known at the
moment to be a duplicate is replaced by its original (duplicate_of followed), and open issues
are preferred.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from issue_assistant.index.query import clean_title, problem_query, problem_text, terms
from issue_assistant.tracker.asof import rewind
from issue_assistant.tracker.models import Issue

if TYPE_CHECKING:
    import numpy as np

    from issue_assistant.index.search import IssueIndex

RRF_K = 60
DEPTH = 50
OPEN_BONUS = 0.1
# A dense rank counts this many times a BM25 rank in the fusion. Chosen on the 14 known pairs of
# the shared data (docs/benchmarks.md): recall@5 0.86 at 5 (as dense alone), 0.79 at 3, and
# recall@10 0.86 at 1. With fewer, a mediocre rank in both lists beats a dense first place.
DENSE_WEIGHT = 5.0


@dataclass
class Match:
    """A candidate original as it was at the moment, with what each retriever said of it."""

    issue: Issue
    score: float = 0.0
    bm25: float = 0.0
    bm25_rank: int | None = None
    dense: float | None = None
    dense_rank: int | None = None
    via: list[int] = field(default_factory=list)

    @property
    def number(self) -> int:
        return self.issue.number


class Retriever:
    """Hybrid retrieval over one index; dense only when the index has an embedder and vectors."""

    def __init__(
        self,
        index: IssueIndex,
        *,
        depth: int = DEPTH,
        k: int = RRF_K,
        open_bonus: float = OPEN_BONUS,
        prune: bool = True,
    ) -> None:
        self.index = index
        self.prune = prune  # False: read every BM25 hit (the reference the pruning must match)
        self.depth = depth
        self.k = k
        self.open_bonus = open_bonus
        self.dense_weight = DENSE_WEIGHT

    # ---- the two retrievers ----------------------------------------------------------------

    def bm25(
        self, issue: Issue, before: datetime, limit: int, *, title_only: bool = False
    ) -> list[tuple[int, float]]:
        """(number, BM25) over title (x2) and body with the problem query, issues only
        (`title_only`: the cleaned title's words against titles, a baseline)."""
        if title_only:
            text = " ".join(terms(clean_title(issue.title)))
            fields: tuple[str, ...] = ("title",)
        else:
            text, fields = problem_query(issue.title, issue.body), ("title", "body")
        if not text:
            return []
        return self.index.ranked(
            text, before=before, exclude=[issue.number], limit=limit, fields=fields
        )

    def query_vector(self, issue: Issue) -> np.ndarray | None:
        """The issue's vector: the stored one if its text is unchanged, else computed now."""
        store = self.index.vectors
        if store is None:
            return None
        text = problem_text(issue.title, issue.body)
        vec = store.vector(issue.number, text)
        if vec is None and self.index.embedder is not None:
            vec = self.index.embedder.embed_one(text)
        return vec

    def dense(self, issue: Issue, before: datetime, limit: int) -> list[tuple[int, float]]:
        store = self.index.vectors
        if store is None or not len(store):
            return []
        vec = self.query_vector(issue)
        if vec is None:
            return []
        return store.nearest(vec, before=before, exclude=issue.number, limit=limit)

    # ---- fusion ----------------------------------------------------------------------------

    def candidates(
        self, issue: Issue, as_of: datetime, limit: int = 10, *, mode: str = "hybrid"
    ) -> list[Match]:
        """The best `limit` earlier issues for `issue` at `as_of`.

        `mode`: hybrid (the default), bm25, dense, or title (BM25 of titles only, a baseline).
        """
        before = min(as_of, issue.created_at)
        lexical = (
            self.bm25(issue, before, self.depth, title_only=mode == "title")
            if mode != "dense"
            else []
        )
        semantic = (
            self.dense(issue, before, self.depth) if mode == "hybrid" or mode == "dense" else []
        )
        fused: dict[int, Match] = {}
        loaded: dict[int, Issue | None] = {}
        # Each list credits an original once, at its best rank (its own or a duplicate's): an
        # original with many duplicates must not outrank a better match by their number.
        credited: set[int] = set()
        # BM25 hits left unread once `limit` matches are sure to end above any later rank: each
        # can only credit itself (no original recorded), so it is read only if a later hit or
        # the dense list reaches it; the ranking is the one of reading every hit.
        waiting: dict[int, tuple[int, float]] = {}
        marked = self.index.marked_duplicates(n for n, _ in lexical) if self.prune else set()

        def credit_bm25(m: Match, rank: int, score: float) -> None:
            if m.number not in credited:
                credited.add(m.number)
                m.score += 1.0 / (self.k + rank)
                m.bm25, m.bm25_rank = score, rank

        def reached(m: Match) -> None:
            if m.number in waiting:
                credit_bm25(m, *waiting.pop(m.number))

        settled = False
        for rank, (number, score) in enumerate(lexical, start=1):
            settled = settled or (self.prune and self._settled(fused, limit, rank))
            if settled and number not in marked:
                waiting[number] = (rank, score)
                continue
            m = self._resolve(number, issue, as_of, before, fused, loaded)
            if m is not None:
                reached(m)
                credit_bm25(m, rank, score)
        dense_credited: set[int] = set()
        for rank, (number, cos) in enumerate(semantic, start=1):
            m = self._resolve(number, issue, as_of, before, fused, loaded)
            if m is not None:
                reached(m)
                if m.number not in dense_credited:
                    dense_credited.add(m.number)
                    m.score += self.dense_weight / (self.k + rank)
                    m.dense, m.dense_rank = cos, rank
        for m in fused.values():
            if m.issue.state == "open":
                m.score *= 1.0 + self.open_bonus
        ranked = sorted(fused.values(), key=lambda m: (-m.score, m.issue.number))
        return ranked[:limit]

    def _settled(self, fused: dict[int, Match], limit: int, rank: int) -> bool:
        """Whether `limit` matches already score above what a BM25 hit at `rank` or later could
        end with, when nothing else reaches it (their scores only grow from here)."""
        if len(fused) < limit:
            return False
        bound = max(1.0, 1.0 + self.open_bonus) / (self.k + rank) * (1 + 1e-9)  # float slack
        sure = 0
        for m in fused.values():
            factor = 1.0 + self.open_bonus if m.issue.state == "open" else 1.0
            if m.score * factor > bound:
                sure += 1
                if sure >= limit:
                    return True
        return False

    def _load(self, number: int, as_of: datetime, loaded: dict[int, Issue | None]) -> Issue | None:
        if number not in loaded:
            stored = self.index.stored(number)
            ok = stored is not None and not stored.is_pull_request and stored.created_at <= as_of
            loaded[number] = rewind(stored, as_of) if ok and stored is not None else None
        return loaded[number]

    def _resolve(
        self,
        number: int,
        issue: Issue,
        as_of: datetime,
        before: datetime,
        fused: dict[int, Match],
        loaded: dict[int, Issue | None],
    ) -> Match | None:
        """The Match of `number`'s canonical original (as known at the moment), made once."""
        current = self._load(number, as_of, loaded)
        if current is None:
            return None
        chain = [number]
        for _ in range(5):
            nxt = current.duplicate_of
            if nxt is None or nxt in chain or nxt == issue.number:
                break
            target = self._load(nxt, as_of, loaded)
            if target is None or target.created_at >= before:
                break
            chain.append(nxt)
            current = target
        m = fused.get(current.number)
        if m is None:
            m = fused[current.number] = Match(issue=current)
        for n in chain[:-1]:
            if n not in m.via:
                m.via.append(n)
        return m
