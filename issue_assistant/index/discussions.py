"""Discussions searched beside issues: a small in-memory tantivy index, a kind of its own.

A discussion is never proposed as a duplicate (GitHub marks only issues as duplicates); an
answered one that clearly matches the new issue is named in the comment as "see also".
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime

import tantivy

from issue_assistant.index.query import issue_query
from issue_assistant.index.search import _ANALYZER, _STEM_STOPS, cosine
from issue_assistant.tracker.models import Discussion


@dataclass(frozen=True)
class DiscussionHit:
    discussion: Discussion
    score: float
    similarity: float

    @property
    def number(self) -> int:
        return self.discussion.number


def _schema() -> tantivy.Schema:
    b = tantivy.SchemaBuilder()
    b.add_integer_field("number", stored=True, indexed=True)
    b.add_date_field("created_at", stored=False, indexed=True, fast=True)
    b.add_text_field("title", stored=False, tokenizer_name="en_stem")
    b.add_text_field("body", stored=False, tokenizer_name="en_stem")
    return b.build()


class DiscussionIndex:
    """Discussions searched by BM25 (with an optional creation-time filter), scored by cosine.

    Only titles and bodies are indexed, never answers, so one index serves every moment: an
    answer given later cannot steer the search.
    """

    def __init__(self, discussions: Iterable[Discussion]) -> None:
        self.discussions = {d.number: d for d in discussions}
        self.schema = _schema()
        self.index = tantivy.Index(self.schema)
        if self.discussions:
            writer = self.index.writer(heap_size=15_000_000, num_threads=1)
            for d in self.discussions.values():
                doc = tantivy.Document()
                doc.add_integer("number", d.number)
                doc.add_date("created_at", d.created_at)
                doc.add_text("title", d.title)
                doc.add_text("body", d.body)
                writer.add_document(doc)
            writer.commit()
            writer.wait_merging_threads()
            self.index.reload()
        self._searcher = self.index.searcher()
        self._df: dict[tuple[str, str], int] = {}

    def __len__(self) -> int:
        return len(self.discussions)

    def vector(self, text: str, field: str = "body") -> dict[str, float]:
        counts = Counter(t for t in _ANALYZER.analyze(text) if t not in _STEM_STOPS)
        n = max(self._searcher.num_docs, 1)
        out: dict[str, float] = {}
        for term, tf in counts.items():
            key = (field, term)
            if key not in self._df:
                self._df[key] = self._searcher.doc_freq(field, term)
            out[term] = (1 + math.log(tf)) * math.log((n + 1) / (self._df[key] + 1))
        return out

    def similarity(self, title: str, body: str | None, d: Discussion) -> float:
        """In [0, 1]: the mean of the title-to-title and text-to-text TF-IDF cosines."""
        t = cosine(self.vector(title, "title"), self.vector(d.title, "title"))
        b = cosine(self.vector(f"{title}\n{body or ''}"), self.vector(f"{d.title}\n{d.body}"))
        return 0.5 * t + 0.5 * b

    def search(
        self,
        text: str,
        limit: int = 5,
        body: str | None = None,
        before: datetime | None = None,
    ) -> list[DiscussionHit]:
        """The discussions most like `text` (a title, with `body`), best first; with `before`,
        only those created before it."""
        if not self.discussions:
            return []
        words = issue_query(text, body)
        if not words:
            return []
        q = self.index.parse_query(words, ["title", "body"], field_boosts={"title": 2.0})
        if before is not None:
            rng = tantivy.Query.range_query(
                self.schema,
                "created_at",
                tantivy.FieldType.Date,
                upper_bound=before,
                include_upper=False,
            )
            q = tantivy.Query.boolean_query([(tantivy.Occur.Must, q), (tantivy.Occur.Must, rng)])
        out: list[DiscussionHit] = []
        for score, address in self._searcher.search(q, limit=limit).hits:
            number = self._searcher.doc(address).to_dict()["number"][0]
            d = self.discussions[number]
            out.append(DiscussionHit(d, float(score), self.similarity(text, body, d)))
        return out


def as_seen(hits: list[DiscussionHit], visible: dict[int, Discussion]) -> list[DiscussionHit]:
    """`hits` with each discussion as the view shows it (dropped when the view has none)."""
    return [replace(h, discussion=visible[h.number]) for h in hits if h.number in visible]


def search_seen(
    index: DiscussionIndex | None,
    text: str,
    limit: int,
    before: datetime | None,
    visible: dict[int, Discussion],
) -> list[DiscussionHit]:
    """Discussions created before `before` most like `text` (title, then body after a newline),
    each as the view shows it; [] without an index. The context and the tools both use it."""
    if index is None or limit <= 0:
        return []
    title, _, body = text.partition("\n")
    hits = index.search(title, limit=limit, body=body, before=before)
    return as_seen(hits, visible)[:limit]


def answering(hits: list[DiscussionHit], threshold: float) -> list[DiscussionHit]:
    """Answered discussions at least `threshold` similar, most similar first: "see also"."""
    keep = [h for h in hits if h.discussion.answered and h.similarity >= threshold]
    return sorted(keep, key=lambda h: -h.similarity)
