"""Searches of the issue index, as of a moment: BM25 queries, TF-IDF vectors, counts."""

from __future__ import annotations

import logging
import math
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

import tantivy

from issue_assistant.index.folder import PARSED, RENAMED_AT, TITLE_BEFORE, IndexFolder
from issue_assistant.index.query import STOPWORDS, issue_query
from issue_assistant.tracker.models import Issue

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from issue_assistant.index.boilerplate import Boilerplate

_ANALYZER = (
    tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
    .filter(tantivy.Filter.remove_long(40))
    .filter(tantivy.Filter.lowercase())
    .filter(tantivy.Filter.stemmer("english"))
    .build()
)
_STEM_STOPS = frozenset(_ANALYZER.analyze(" ".join(sorted(STOPWORDS))))


def cosine(a: dict[str, float], b: dict[str, float]) -> float:
    if not a or not b:
        return 0.0
    dot = sum(w * b.get(t, 0.0) for t, w in a.items())
    norm = math.sqrt(sum(w * w for w in a.values()) * sum(w * w for w in b.values()))
    return dot / norm if norm else 0.0


@dataclass(frozen=True)
class Hit:
    number: int
    title: str
    score: float
    state: str
    labels: list[str]
    created_at: datetime
    is_pull_request: bool
    body: str = ""

    def to_json(self) -> dict:
        return {
            "number": self.number,
            "title": self.title,
            "state": self.state,
            "labels": self.labels,
            "score": round(self.score, 4),
            "created_at": self.created_at.isoformat().replace("+00:00", "Z"),
            "is_pull_request": self.is_pull_request,
        }


def _terms(words: tuple[str, ...]) -> tuple[str, ...]:
    """The index's terms of `words` (letters and digits only: a piece of punctuation is none)."""
    return tuple(t for w in words if w.isascii() and w.isalnum() for t in _ANALYZER.analyze(w))


class IssueIndex(IndexFolder):
    """One repository's issues in tantivy (`IndexFolder`), searched as of a moment."""

    def count_labelled(
        self,
        names: Iterable[str],
        *,
        since: datetime | None = None,
        before: datetime | None = None,
    ) -> int:
        """How many issues (no pull requests) created in [since, before) carry one of `names`
        in any casing: a count from tantivy's postings, no stored document read."""
        wanted = {n.casefold() for n in names}
        spellings = sorted(n for n in self.label_names() if n.casefold() in wanted)
        if not spellings:
            return 0
        labels = [
            (tantivy.Occur.Should, tantivy.Query.term_query(self.schema, "labels", n))
            for n in spellings
        ]
        pr = tantivy.Query.term_query(self.schema, "is_pull_request", True)
        clauses = [
            (tantivy.Occur.Must, tantivy.Query.boolean_query(labels)),
            (tantivy.Occur.MustNot, pr),
        ]
        if since is not None or before is not None:
            clauses.append((tantivy.Occur.Must, self._created(since, before)))
        q = tantivy.Query.boolean_query(clauses)
        return self._searcher().search(q, limit=1, count=True).count

    def _created(self, since: datetime | None, before: datetime | None) -> tantivy.Query:
        """Documents created in [since, before) (a side left open when None)."""
        return tantivy.Query.range_query(
            self.schema,
            "created_at",
            tantivy.FieldType.Date,
            lower_bound=since,
            upper_bound=before,
            include_upper=before is None,
        )

    def highest_number(self) -> int:
        """The highest issue or pull request number indexed (0 when empty): a count of what
        the tracker holds, numbers being shared and given in order."""
        searcher = self._searcher()
        q = tantivy.Query.all_query()
        hits = searcher.search(q, limit=1, count=False, order_by_field="number").hits
        return int(hits[0][0]) if hits else 0

    def issue_count(self) -> int:
        """How many issues (no pull requests) are indexed: a count, no document read."""
        pr = tantivy.Query.term_query(self.schema, "is_pull_request", True)
        q = tantivy.Query.boolean_query(
            [(tantivy.Occur.Must, tantivy.Query.all_query()), (tantivy.Occur.MustNot, pr)]
        )
        return self._searcher().search(q, limit=1, count=True).count

    def embed_changed(
        self,
        changed: list[Issue],
        *,
        complete: bool = True,
        budget_s: float | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> int:
        """The vectors of a run's `changed` issues, or of every stored issue lacking one when
        more lack one than `changed` holds (any, when `changed` is not `complete`): a first
        build, or vectors asked for since the index was built; returns how many."""
        if self.vectors is None:
            return 0
        lacking = self.issue_count() - len(self.vectors)
        todo = self.all_stored() if lacking > (len(changed) if complete else 0) else changed
        return self.embed(todo, budget_s=budget_s, progress=progress)

    def vector(self, text: str, field: str = "body") -> dict[str, float]:
        """TF-IDF weights of `text`'s stemmed words (the same analysis as the index's fields)."""
        counts = Counter(t for t in _ANALYZER.analyze(text) if t not in _STEM_STOPS)
        if not counts:
            return {}
        searcher = self._searcher()
        n = max(searcher.num_docs, 1)
        out: dict[str, float] = {}
        for term, tf in counts.items():
            key = (field, term)
            df = self._df.get(key)
            if df is None:
                df = self._df[key] = searcher.doc_freq(field, term)
            out[term] = (1 + math.log(tf)) * math.log((n + 1) / (df + 1))
        return out

    def issues_with(self, words: tuple[str, ...], before: datetime, *, phrase: bool) -> int:
        """How many issues created before `before` hold every one of `words` (letters and
        digits only) in their title or body, or the phrase they make (no words: every issue
        created before `before`); each count is kept until the index changes."""
        terms = _terms(words)
        key = (terms, phrase and len(terms) > 1, before)
        if key not in self._counts:
            Occur, bq = tantivy.Occur, tantivy.Query.boolean_query
            if key[1]:
                core = bq([(Occur.Should, self._phrase(f, terms)) for f in ("title", "body")])
            elif terms:
                core = self._every_word(terms)
            else:
                core = tantivy.Query.all_query()
            q = self._earlier_issues([core], before)
            self._counts[key] = self._searcher().search(q, limit=1, count=True).count
        return self._counts[key]

    def bodies_with(
        self, words: tuple[str, ...], phrase: tuple[str, ...], before: datetime, limit: int
    ) -> list[str]:
        """The bodies of up to `limit` issues created before `before` that hold every one of
        `words` (letters and digits only) in their title or body and the phrase `phrase` in
        their body (not kept: a caller keeps what it reads from them)."""
        said = tuple(t for w in phrase for t in _ANALYZER.analyze(w))
        q = self._earlier_issues(
            [self._every_word(_terms(words)), self._phrase("body", said)], before
        )
        return [hit.body for hit in self._run(q, limit)]

    def _every_word(self, terms: tuple[str, ...]) -> tantivy.Query:
        """Each term required, in the title or the body."""
        Occur, bq = tantivy.Occur, tantivy.Query.boolean_query
        return bq(
            [
                (Occur.Must, bq([(Occur.Should, self._term(f, t)) for f in ("title", "body")]))
                for t in terms
            ]
        )

    def _earlier_issues(self, cores: list[tantivy.Query], before: datetime) -> tantivy.Query:
        """Every one of `cores`, on the issues (no pull requests) created before `before`."""
        Occur = tantivy.Occur
        pr = tantivy.Query.term_query(self.schema, "is_pull_request", True)
        return tantivy.Query.boolean_query(
            [(Occur.Must, core) for core in cores]
            + [(Occur.MustNot, self._created(before, None)), (Occur.MustNot, pr)]
        )

    def _term(self, field: str, term: str) -> tantivy.Query:
        return tantivy.Query.term_query(self.schema, field, term)

    def _phrase(self, field: str, terms: tuple[str, ...]) -> tantivy.Query:
        return tantivy.Query.phrase_query(self.schema, field, list(terms))

    def query(
        self,
        text: str,
        *,
        as_of: datetime | None = None,
        include_prs: bool = False,
        exclude: Iterable[int] = (),
        fields: tuple[str, ...] = ("title", "body"),
    ) -> tantivy.Query:
        """BM25 over title (x2) and body, filtered inside the query by creation time and kind."""
        clauses: list[tuple[tantivy.Occur, tantivy.Query]] = []
        if text.strip():
            parsed = self._words_query(text, fields)
            if as_of is not None and "title" in fields:
                parsed = self._titles_then(parsed, text, fields, as_of)
            clauses.append((tantivy.Occur.Must, parsed))
        else:
            clauses.append((tantivy.Occur.Must, tantivy.Query.all_query()))
        if as_of is not None:
            # What was created at or after the moment is excluded rather than the range before
            # it required: a required range adds a constant 1.0 to the BM25 score of documents
            # in a segment it covers only in part (tantivy 0.27), so the score of an issue
            # depended on which segment held it; and excluding the few later documents costs
            # less than intersecting with nearly all of them.
            clauses.append((tantivy.Occur.MustNot, self._created(as_of, None)))
        if not include_prs:
            pr = tantivy.Query.term_query(self.schema, "is_pull_request", True)
            clauses.append((tantivy.Occur.MustNot, pr))
        for number in exclude:
            clauses.append(
                (tantivy.Occur.MustNot, tantivy.Query.term_query(self.schema, "number", number))
            )
        return tantivy.Query.boolean_query(clauses)

    def _words_query(self, text: str, fields: tuple[str, ...]) -> tantivy.Query:
        """Plain words (each optionally `word^boost`) as one flat disjunction of term queries
        over `fields`, titles x2: what `parse_query` makes of them, scored the same, but flat, so
        tantivy can skip blocks of documents that cannot reach the top (faster on a large index
        than `parse_query`'s nested per-word disjunctions)."""
        clauses: list[tuple[tantivy.Occur, tantivy.Query]] = []
        for token in text.split():
            word, _, boost = token.partition("^")
            try:
                weight = float(boost) if boost else 1.0
            except ValueError:
                weight = 1.0
            for term in _ANALYZER.analyze(word):
                for field in fields:
                    q = tantivy.Query.term_query(self.schema, field, term)
                    w = weight * (2.0 if field in ("title", TITLE_BEFORE) else 1.0)
                    clauses.append((tantivy.Occur.Should, tantivy.Query.boost_query(q, w)))
        if not clauses:
            return tantivy.Query.empty_query()
        return tantivy.Query.boolean_query(clauses)

    def _titles_then(
        self, parsed: tantivy.Query, text: str, fields: tuple[str, ...], as_of: datetime
    ) -> tantivy.Query:
        """`parsed`, except that an issue renamed at or after `as_of` matches on its title
        before the rename instead of its current one."""
        later = tantivy.Query.range_query(
            self.schema, RENAMED_AT, tantivy.FieldType.Date, lower_bound=as_of, include_lower=True
        )
        renamed = self._renamed.get(as_of)
        if renamed is None:
            if len(self._renamed) >= PARSED:
                self._renamed.clear()
            renamed = bool(self._searcher().search(later, limit=1, count=False).hits)
            self._renamed[as_of] = renamed
        if not renamed:
            return parsed  # no issue was renamed after the moment
        then_fields = [TITLE_BEFORE if f == "title" else f for f in fields]
        then = self._words_query(text, tuple(then_fields))
        Occur, bq = tantivy.Occur, tantivy.Query.boolean_query
        now = bq([(Occur.Must, parsed), (Occur.MustNot, later)])
        before = bq([(Occur.Must, then), (Occur.Must, tantivy.Query.const_score_query(later, 0.0))])
        return bq([(Occur.Should, now), (Occur.Should, before)])

    def search(
        self,
        text: str,
        *,
        as_of: datetime | None = None,
        limit: int = 10,
        include_prs: bool = False,
        exclude: Iterable[int] = (),
    ) -> list[Hit]:
        """Free text search: `text` is reduced to plain words first, so any input is safe."""
        words = issue_query(text, "")
        if not words:
            return []
        q = self.query(words, as_of=as_of, include_prs=include_prs, exclude=exclude)
        return self._run(q, limit)

    def ranked(
        self,
        text: str,
        *,
        before: datetime,
        exclude: Iterable[int] = (),
        limit: int = 50,
        fields: tuple[str, ...] = ("title", "body"),
    ) -> list[tuple[int, float]]:
        """(number, BM25) of issues created before `before` for a query string of plain words
        (optionally `word^boost`), pull requests left out; the documents stay cached."""
        q = self.query(text, as_of=before, exclude=exclude, fields=fields)
        searcher = self._searcher()
        hits = searcher.search(q, limit=limit, count=False).hits
        addresses = [address for _, address in hits]
        numbers = searcher.fast_field_values("number", addresses)
        # No stored document is read here: `stored` reads the ones a caller asks for by address.
        if len(self._addresses) >= PARSED:
            self._addresses.clear()
        self._addresses.update(zip(numbers, addresses, strict=True))
        return [(int(n), float(score)) for n, (score, _) in zip(numbers, hits, strict=True)]

    def marked_duplicates(self, numbers: Iterable[int]) -> set[int]:
        """Those of `numbers` whose record names an original (`duplicate_of`, as last indexed),
        read from the fast field for the hits of `ranked`, from the record for any other."""
        known = [n for n in numbers if n in self._addresses]
        values = self._searcher().fast_field_values(
            "duplicate_of", [self._addresses[n] for n in known]
        )
        marked = {n for n, v in zip(known, values, strict=True) if v is not None}
        for n in numbers:
            if n not in self._addresses:
                issue = self.stored(n)
                if issue is not None and issue.duplicate_of is not None:
                    marked.add(n)
        return marked

    def similar_to(
        self, issue: Issue, *, as_of: datetime | None = None, limit: int = 10
    ) -> list[Hit]:
        """Earlier issues most like `issue` (never itself, never a pull request)."""
        words = issue_query(issue.title, issue.body)
        if not words:
            return []
        q = self.query(words, as_of=as_of or issue.created_at, exclude=[issue.number])
        return self._run(q, limit)

    def _run(self, q: tantivy.Query, limit: int) -> list[Hit]:
        searcher = self._searcher()  # the one of the last commit, kept until the next
        hits: list[Hit] = []
        for score, address in searcher.search(q, limit=limit, count=False).hits:
            d = searcher.doc(address).to_dict()
            hits.append(
                Hit(
                    number=d["number"][0],
                    title=d["title"][0],
                    score=float(score),
                    state=d["state"][0],
                    labels=list(d.get("labels", [])),
                    created_at=d["created_at"][0],
                    is_pull_request=d["is_pull_request"][0],
                    body=d.get("body", [""])[0],
                )
            )
        return hits

    def issues_before(self, as_of: datetime | None = None) -> list[Hit]:
        """Every indexed issue (no pull requests) created before `as_of`, with stored fields."""
        return self._run(self.query("", as_of=as_of), max(len(self), 1))

    def boilerplate(self) -> Boilerplate:
        """The lines many issues share, kept beside the index, rebuilt when it grew by 10%."""
        from issue_assistant.index.boilerplate import Boilerplate, stale

        if self._boilerplate is None:
            found = Boilerplate.load(self.path)
            if stale(found, len(self)):
                found = Boilerplate.build((h.created_at, h.body) for h in self.issues_before())
                found.indexed = len(self)
                found.save(self.path)
                log.info("index: %d boilerplate lines", len(found.common))
            self._boilerplate = found
        return self._boilerplate  # type: ignore[return-value]
