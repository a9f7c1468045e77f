"""The candidate originals of an issue: earlier issues as they were at the moment, best first."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from issue_assistant.index.retrieval import Retriever
from issue_assistant.tracker.models import Issue

if TYPE_CHECKING:
    from issue_assistant.index.search import IssueIndex

T = TypeVar("T")


@dataclass(frozen=True)
class Candidate:
    """An earlier issue shown to the engine, as it was at the moment, with its search score.

    From hybrid retrieval (`index.retrieval`): `bm25` and `dense` are what each retriever said
    (dense is None without embeddings), `via` the duplicates that led to this original.
    """

    issue: Issue
    score: float
    bm25: float = 0.0
    dense: float | None = None
    via: tuple[int, ...] = ()


def similar_candidates(
    index: IssueIndex, issue: Issue, as_of: datetime, limit: int
) -> list[Candidate]:
    """The candidate originals of `issue` at `as_of`, best first."""
    matches = Retriever(index).candidates(issue, as_of, limit)
    return [
        Candidate(m.issue, m.score, bm25=m.bm25, dense=m.dense, via=tuple(m.via)) for m in matches
    ]


class Searched(Protocol):
    """What scoring an issue's candidates reads (a `Context` is one): the issue, the index, the
    moment and the search's candidates, best first."""

    @property
    def issue(self) -> Issue: ...
    @property
    def index(self) -> IssueIndex: ...
    @property
    def as_of(self) -> datetime: ...
    @property
    def candidates(self) -> list[Candidate]: ...
    @property
    def pairs(self) -> PairMemo | None:
        """The candidates' pair features by limit, computed once; None: not kept."""
        ...


class PairMemo:
    """The pair features of one issue's candidates (`index.duplicates.pair_features`) by
    limit, computed once: the engine, the evidence table and the plan each ask for them."""

    def __init__(self) -> None:
        self._by_limit: dict[int | None, Any] = {}

    def get(self, limit: int | None, compute: Callable[[], T]) -> T:
        if limit not in self._by_limit:
            self._by_limit[limit] = compute()
        return self._by_limit[limit]
