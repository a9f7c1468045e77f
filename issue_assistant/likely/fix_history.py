"""History as a signal: the files changed by the fixes of earlier issues like this one.

`FixHistory` holds the fixed issues a moment may know (each with when its fix became visible,
and the files it changed) in a small tantivy index over their titles and bodies. For a new issue
`hints` votes for the files of the most similar earlier fixes (weighted by BM25), `prior` for the
files most often fixed so far; both see only fixes visible strictly before the moment, and only
files the checkout still has.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

import tantivy

from issue_assistant.index.query import issue_query
from issue_assistant.likely.code import CodeIndex
from issue_assistant.likely.signals import Hint
from issue_assistant.tracker.base import Tracker


@dataclass(frozen=True)
class PastFix:
    issue: int
    title: str
    body: str
    when: datetime  # from when the fix was known (merged, or the issue closed)
    files: tuple[str, ...]


def _schema() -> tantivy.Schema:
    b = tantivy.SchemaBuilder()
    b.add_integer_field("issue", stored=True, indexed=True)
    b.add_text_field("title", stored=False, tokenizer_name="en_stem")
    b.add_text_field("body", stored=False, tokenizer_name="en_stem")
    b.add_date_field("when", stored=False, indexed=True, fast=True)
    return b.build()


class FixHistory:
    def __init__(self, fixes: Iterable[PastFix]) -> None:
        self.fixes = {f.issue: f for f in fixes if f.files}
        self.schema = _schema()
        self.index = tantivy.Index(self.schema)
        writer = self.index.writer(heap_size=15_000_000, num_threads=1)
        for f in self.fixes.values():
            writer.add_document(
                tantivy.Document(issue=f.issue, title=f.title, body=f.body[:20_000], when=f.when)
            )
        writer.commit()
        writer.wait_merging_threads()
        self.index.reload()
        self._searcher = self.index.searcher()
        self._by_time = sorted(self.fixes.values(), key=lambda f: f.when)

    @classmethod
    def from_tracker(cls, tracker: Tracker) -> FixHistory:
        """The issues `tracker` knows a fixing pull request of (`fixed_by`), known from closing."""
        fixes = []
        for issue in tracker.all_issues():
            if issue.is_pull_request or not issue.fixed_by or issue.closed_at is None:
                continue
            files: list[str] = []
            for pr in issue.fixed_by:
                files += [f for f in pr.files if f not in files]
            fixes.append(
                PastFix(issue.number, issue.title, issue.body or "", issue.closed_at, tuple(files))
            )
        return cls(fixes)

    @classmethod
    def known(cls, tracker: Tracker) -> FixHistory | None:
        """The fixed issues of `tracker` (the whole tracker: each query filters by the moment);
        None when none has a known fix."""
        history = cls.from_tracker(tracker)
        return history if len(history) else None

    def __len__(self) -> int:
        return len(self.fixes)

    def similar(
        self, title: str, body: str, before: datetime, limit: int = 10, exclude: int | None = None
    ) -> list[tuple[PastFix, float]]:
        """The fixed issues most like (title, body) among those fixed before `before`."""
        words = issue_query(title, body)
        if not words or not self.fixes:
            return []
        q = self.index.parse_query(words, ["title", "body"], field_boosts={"title": 2.0})
        rng = tantivy.Query.range_query(
            self.schema, "when", tantivy.FieldType.Date, upper_bound=before, include_upper=False
        )
        clauses = [(tantivy.Occur.Must, q), (tantivy.Occur.Must, rng)]
        if exclude is not None:
            term = tantivy.Query.term_query(self.schema, "issue", exclude)
            clauses.append((tantivy.Occur.MustNot, term))
        out = []
        found = self._searcher.search(tantivy.Query.boolean_query(clauses), limit=limit)
        for score, address in found.hits:
            number = self._searcher.doc(address).to_dict()["issue"][0]
            out.append((self.fixes[number], float(score)))
        return out

    def hints(
        self,
        code: CodeIndex,
        title: str,
        body: str,
        before: datetime,
        *,
        exclude: int | None = None,
        neighbours: int = 10,
    ) -> list[Hint]:
        """Files the similar earlier fixes changed, by the summed similarity of those fixes."""
        score: dict[str, float] = {}
        who: dict[str, list[int]] = {}
        for fix, s in self.similar(title, body, before, neighbours, exclude):
            for path in fix.files:
                if path in code.files:
                    score[path] = score.get(path, 0.0) + s
                    who.setdefault(path, []).append(fix.issue)
        ranked = sorted(score, key=lambda p: -score[p])
        return [
            Hint(p, score[p], None, "changed to fix " + ", ".join(f"#{n}" for n in who[p][:3]))
            for p in ranked
        ]

    def prior(self, code: CodeIndex, before: datetime, last: int = 300) -> list[Hint]:
        """The files the last `last` fixes before `before` changed most often."""
        known = [f for f in self._by_time if f.when < before][-last:]
        counts = Counter(p for f in known for p in set(f.files) if p in code.files)
        return [
            Hint(p, float(n), None, f"changed by {n} of the last {len(known)} fixes")
            for p, n in counts.most_common(30)
        ]
