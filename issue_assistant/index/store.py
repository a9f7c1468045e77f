"""The on-disk tantivy index: built from any tracker, updated incrementally, searched as of t."""

from __future__ import annotations

import array
import hashlib
import json
import logging
import math
import shutil
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import tantivy

from issue_assistant.atomic import make_room, write_atomic, write_atomic_with
from issue_assistant.cachelock import holding
from issue_assistant.index.query import STOPWORDS, issue_query
from issue_assistant.tracker.models import Issue, Repository

log = logging.getLogger(__name__)

PARSED = 20_000  # parsed records kept in memory

if TYPE_CHECKING:
    from issue_assistant.index.boilerplate import Boilerplate
    from issue_assistant.index.embeddings import Embedder
    from issue_assistant.index.vectors import VectorStore

SCHEMA_VERSION = 3  # 3: the title before a rename, searched as of a moment before it
META = "issue-assistant-meta.json"
# Each indexed issue's content hash, read only when the index is updated (on a large repository
# the file is big: parsing it on every warm `analyze` or `search` was O(n) work).
HASHES = "issue-assistant-hashes.json"
# The hashes of the snapshot's issue lines the index was last brought up to date from (8 bytes
# each): an update from a newer snapshot parses only the lines not among them.
LINES = "issue-assistant-lines.bin"
LINE_NUMBERS = "issue-assistant-line-numbers.bin"  # the issue number of each line above
TITLE_BEFORE = "title_before"
RENAMED_AT = "renamed_at"


def _schema() -> tantivy.Schema:
    b = tantivy.SchemaBuilder()
    b.add_integer_field("number", stored=True, indexed=True, fast=True)
    b.add_text_field("title", stored=True, tokenizer_name="en_stem")
    # The first title of a renamed issue, and when it was last renamed: a search as of a moment
    # before the rename matches the title as it was then (`query`), never a later one.
    b.add_text_field(TITLE_BEFORE, stored=False, tokenizer_name="en_stem")
    b.add_date_field(RENAMED_AT, stored=False, indexed=True, fast=True)
    b.add_text_field("body", stored=True, tokenizer_name="en_stem")
    b.add_text_field("labels", stored=True, tokenizer_name="raw")
    b.add_text_field("state", stored=True, tokenizer_name="raw")
    b.add_text_field("state_reason", stored=True, tokenizer_name="raw")
    b.add_date_field("created_at", stored=True, indexed=True, fast=True)
    b.add_date_field("closed_at", stored=True, indexed=True, fast=True)
    b.add_boolean_field("is_pull_request", stored=True, indexed=True, fast=True)
    b.add_integer_field("duplicate_of", stored=True, indexed=True, fast=True)
    # The whole record (events, comments, user...), so candidates need no tracker read.
    b.add_bytes_field("record", stored=True)
    return b.build()


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


def _fingerprint(issue: Issue) -> str:
    keys = ("title", "body", "labels", "state", "state_reason", "closed_at", "duplicate_of")
    data = issue.model_dump(mode="json", include=set(keys))
    return hashlib.sha1(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]


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


class IssueIndex:
    """One repository's issues in tantivy, kept at `path` with a meta file of content hashes."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        with holding(self.path):  # opening may clear or rebuild the folder
            self._init()

    def _init(self) -> None:
        if self.path.exists() and not self.path.is_dir():
            log.warning("index: %s is a file, not the index folder; rebuilt", self.path)
            self.path.unlink()
        self.path.mkdir(parents=True, exist_ok=True)
        self.schema = _schema()
        meta = self._read_meta()
        if meta.get("schema_version") != SCHEMA_VERSION:
            self._clear()
            meta = {"schema_version": SCHEMA_VERSION, "hashes": {}}
        # an index written before the hashes had their own file keeps them in the meta file
        self._hashes_loaded: dict[str, str] | None = meta.get("hashes")
        self._count: int = int(meta.get("count", len(self._hashes_loaded or {})))
        # The label spellings the indexed issues carry (None: an index made before they were
        # kept; read from the stored documents once, when first needed).
        names = meta.get("label_names")
        self._label_names: set[str] | None = set(names) if isinstance(names, list) else None
        if self._label_names is None and not self._count:
            self._label_names = set()
        # True while a live first build is under way (the listing spans runs).
        self.building: bool = bool(meta.get("building", False))
        self.source: dict | None = meta.get("source")
        self.repository: Repository | None = (
            Repository.model_validate(meta["repository"]) if meta.get("repository") else None
        )
        self._rebuild = False  # the hashes were lost: the next update re-indexes everything
        self.index = self._open()
        if "hashes" in meta and meta["hashes"]:
            self._write_meta(hashes=True)  # once: the next warm open reads the small file only
        self._df: dict[tuple[str, str], int] = {}
        self._counts: dict[tuple[str, datetime], int] = {}
        # whether an issue was renamed at or after a moment, per moment (`_titles_then`)
        self._renamed: dict[datetime, bool] = {}
        # what readers derive from this index's statistics, kept until it changes (`memo`)
        self.memo: dict = {}
        self._cached_searcher: tantivy.Searcher | None = None
        self._addresses: dict[int, tantivy.DocAddress] = {}  # hits of `ranked`, this searcher
        self._parsed: dict[int, Issue] = {}
        self.vectors: VectorStore | None = None
        self._embedder: Embedder | None = None
        self._embedder_loader: Callable[[], Embedder | None] | None = None
        self._boilerplate: Boilerplate | None = None

    # ---- embeddings ------------------------------------------------------------------------

    def enable_embeddings(self, loader: Callable[[], Embedder | None]) -> None:
        """Keep vectors beside the index; the model is loaded (by `loader`) only when needed."""
        from issue_assistant.index.embeddings import DIM, MODEL_ID
        from issue_assistant.index.vectors import VectorStore

        self.vectors = VectorStore(self.path / "vectors", MODEL_ID, DIM)
        self._embedder_loader = loader

    @property
    def embedder(self) -> Embedder | None:
        if self._embedder is None and self._embedder_loader is not None:
            self._embedder = self._embedder_loader()
            self._embedder_loader = None
        return self._embedder

    def embed(
        self,
        issues: Iterable[Issue],
        *,
        budget_s: float | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> int:
        """Compute the vectors `issues` lack (none without embeddings); returns how many."""
        if self.vectors is None:
            return 0
        todo = self.vectors.missing(issues)
        if not todo or self.embedder is None:
            return 0
        embedder = self.embedder
        with holding(self.path):
            return self.vectors.update(
                todo, embedder.embed_one, budget_s=budget_s, progress=progress
            )

    def _clear(self) -> None:
        """Everything in the index folder removed (a rebuild follows from the tracker)."""
        for child in self.path.iterdir():  # another process may remove files meanwhile
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child, ignore_errors=True)
            else:
                child.unlink(missing_ok=True)

    def _open(self) -> tantivy.Index:
        """The tantivy index, checked: files tantivy cannot read (truncated, zeroed), or a
        document count other than the one recorded, are logged in one line and the folder is
        rebuilt from the tracker by the next `update`."""
        problem = None
        try:
            index = tantivy.Index(self.schema, path=str(self.path), reuse=True)
            docs = index.searcher().num_docs
            if docs != self._count:
                problem = f"{docs} documents, {self._count} recorded"
        except ValueError as exc:
            problem = " ".join(str(exc).split())[:160]
        if problem is None:
            return index
        log.warning("index: %s cannot be used (%s); rebuilt", self.path, problem)
        self._clear()
        self._hashes_loaded, self._count, self.source, self.repository = {}, 0, None, None
        self._write_meta(hashes=True)
        return tantivy.Index(self.schema, path=str(self.path), reuse=True)

    def _read_meta(self) -> dict:
        try:
            meta = json.loads((self.path / META).read_text())
        except (OSError, ValueError, RecursionError):
            return {}
        ok = isinstance(meta, dict) and isinstance(meta.get("count", 0), int)
        ok = ok and isinstance(meta.get("hashes", {}), dict)
        return meta if ok else {}

    @property
    def _hashes(self) -> dict[str, str]:
        if self._hashes_loaded is None:
            try:
                loaded = json.loads((self.path / HASHES).read_text())
            except (OSError, ValueError, RecursionError):
                loaded = None
            if not isinstance(loaded, dict) or len(loaded) != self._count:
                # Which documents the index holds is unknown: re-index them all, once.
                log.warning("index: %s lost its content hashes; re-indexed", self.path)
                loaded, self._rebuild = {}, True
            self._hashes_loaded = loaded
        return self._hashes_loaded

    def _write_meta(self, hashes: bool = False) -> None:
        """The small meta file (and, with `hashes`, the hashes file first: a reader of the meta
        file's count finds hashes at least as new)."""
        if hashes:
            write_atomic(self.path / HASHES, json.dumps(self._hashes), own=True)
            self._count = len(self._hashes)
        tmp = self.path / (META + ".tmp")
        meta: dict = {"schema_version": SCHEMA_VERSION, "count": self._count, "source": self.source}
        if self._label_names is not None:
            meta["label_names"] = sorted(self._label_names)
        if self.building:
            meta["building"] = True
        if self.repository is not None:
            meta["repository"] = self.repository.model_dump(mode="json")
        make_room(tmp)
        make_room(self.path / META)
        tmp.write_text(json.dumps(meta))
        tmp.replace(self.path / META)

    def mark_source(
        self,
        source: dict | None,
        repository: Repository | None = None,
        lines: dict[int, int] | None = None,
    ) -> None:
        """Remember what the index was last brought up to date from (a snapshot's size and
        mtime, and the hash of each issue line with its issue's number), so a warm run can skip
        reading the snapshot when it has not changed, and an update parse only the lines that
        did (and tell which issues left it)."""
        with holding(self.path):
            if lines is not None:
                packed = array.array("Q", lines).tobytes()
                numbers = array.array("q", lines.values()).tobytes()
                write_atomic_with(self.path / LINE_NUMBERS, lambda fh: fh.write(numbers), own=True)
                write_atomic_with(self.path / LINES, lambda fh: fh.write(packed), own=True)
            self.source = source
            if repository is not None:
                self.repository = repository
            self._write_meta()

    def source_lines(self) -> dict[int, int]:
        """The issue-line hashes of `mark_source` with their issue numbers (empty when unknown,
        unreadable, or after another update)."""
        try:
            data = (self.path / LINES).read_bytes()
            raw = (self.path / LINE_NUMBERS).read_bytes()
        except OSError:
            return {}
        hashes, numbers = array.array("Q"), array.array("q")
        hashes.frombytes(data[: len(data) // 8 * 8])
        numbers.frombytes(raw[: len(raw) // 8 * 8])
        if len(hashes) != len(numbers) or len(data) % 8 or len(raw) % 8:
            return {}
        return dict(zip(hashes, numbers, strict=True))

    def mark_building(self, building: bool) -> None:
        """Whether a first build is still under way (its listing spans runs); saved on change."""
        if building != self.building:
            with holding(self.path):
                self.building = building
                self._write_meta()

    def label_names(self) -> set[str]:
        """Every label spelling the indexed issues and pull requests carry (kept with the index,
        grown by each update; an index made before they were kept reads its documents once)."""
        if self._label_names is None:
            searcher = self._searcher()
            limit = max(searcher.num_docs, 1)
            names: set[str] = set()
            for _, address in searcher.search(tantivy.Query.all_query(), limit=limit).hits:
                names.update(searcher.doc(address).to_dict().get("labels", []))
            self._label_names = names
            self._write_meta()
        return self._label_names

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

    def stored(self, number: int) -> Issue | None:
        """Issue `number` as last indexed (its whole record), or None. Parsed records are kept
        (up to `PARSED`) until the next update: callers copy before changing one (`rewind`)."""
        parsed = self._parsed.get(number)
        if parsed is not None:
            return parsed
        searcher = self._searcher()
        address = self._addresses.get(number)
        if address is not None:
            if len(self._parsed) >= PARSED:
                self._parsed.clear()
            parsed = self._parsed[number] = self._issue(searcher.doc(address).to_dict())
            return parsed
        q = tantivy.Query.term_query(self.schema, "number", number)
        hits = searcher.search(q, limit=1).hits
        if not hits:
            return None
        return self._issue(searcher.doc(hits[0][1]).to_dict())

    @staticmethod
    def _issue(d: dict) -> Issue:
        record = json.loads(d["record"][0])
        record["title"] = d["title"][0]
        record["body"] = d.get("body", [""])[0]
        return Issue.model_validate(record)

    def all_stored(self) -> Iterator[Issue]:
        """Every indexed issue and pull request (reads the whole index: O(n))."""
        searcher = self._searcher()
        hits = searcher.search(tantivy.Query.all_query(), limit=max(searcher.num_docs, 1)).hits
        for _, address in hits:
            yield self._issue(searcher.doc(address).to_dict())

    def __len__(self) -> int:
        return self._count

    def numbers(self) -> set[int]:
        """The numbers of every indexed issue and pull request (from the content hashes)."""
        return {int(n) for n in self._hashes}

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
        words = tuple(w for w in words if w.isascii() and w.isalnum())
        text = " ".join(f"+{w}" for w in words)
        if phrase and len(words) > 1:
            text = '"' + " ".join(words) + '"'
        key = (text, before)
        if key not in self._counts:
            q = self.query(key[0], as_of=before)
            self._counts[key] = self._searcher().search(q, limit=1, count=True).count
        return self._counts[key]

    def _searcher(self) -> tantivy.Searcher:
        if self._cached_searcher is None:
            self._cached_searcher = self.index.searcher()
        return self._cached_searcher

    def update(self, issues: Iterable[Issue], *, whole: bool = False) -> int:
        """Add new issues and re-index changed ones; returns how many documents were written.
        With `whole`, `issues` is everything the tracker holds: the indexed issues not among
        them (deleted, transferred) are removed, with their vectors."""
        with holding(self.path):
            changed: list[tuple[Issue, str]] = []
            seen: set[str] = set()
            for issue in issues:
                fp = _fingerprint(issue)
                seen.add(str(issue.number))
                if self._hashes.get(str(issue.number)) != fp:
                    changed.append((issue, fp))
            gone = [int(n) for n in self._hashes if n not in seen] if whole else []
            if gone:
                self.remove(gone)
            if not changed:
                return 0
            return self._write(changed)

    def remove(self, numbers: Iterable[int]) -> int:
        """Remove issues gone from the tracker (deleted, transferred): their documents, content
        hashes and vectors; returns how many were indexed."""
        with holding(self.path):
            gone = sorted({n for n in numbers if str(n) in self._hashes})
            if not gone:
                return 0
            (self.path / LINES).unlink(missing_ok=True)
            writer = self.index.writer(heap_size=50_000_000, num_threads=1)
            for n in gone:  # by query: a delete by term on this unsigned field deletes nothing
                writer.delete_documents_by_query(tantivy.Query.term_query(self.schema, "number", n))
            writer.commit()
            writer.wait_merging_threads()
            for n in gone:
                self._hashes.pop(str(n), None)
            if self.vectors is not None:
                self.vectors.remove(gone)
            self._write_meta(hashes=True)
            self._reloaded()
            log.info("index: %d issues gone from the tracker removed", len(gone))
            return len(gone)

    def _write(self, changed: list[tuple[Issue, str]]) -> int:
        # Written by another source now: the snapshot lines no longer tell what is indexed.
        (self.path / LINES).unlink(missing_ok=True)
        writer = self.index.writer(heap_size=50_000_000, num_threads=1)
        if self._rebuild:
            writer.delete_all_documents()
            self._rebuild = False
        for issue, _ in changed:
            if str(issue.number) in self._hashes:
                writer.delete_documents_by_query(
                    tantivy.Query.term_query(self.schema, "number", issue.number)
                )
            writer.add_document(self._document(issue))
        writer.commit()
        writer.wait_merging_threads()
        for issue, fp in changed:
            self._hashes[str(issue.number)] = fp
            if self._label_names is not None:
                self._label_names.update(issue.labels)
        self._write_meta(hashes=True)
        self._reloaded()
        return len(changed)

    def _reloaded(self) -> None:
        """Searches see the last commit; what was kept from the one before is dropped."""
        self.index.reload()
        self._df.clear()
        self._counts.clear()
        self._renamed.clear()
        self.memo.clear()
        self._addresses.clear()
        self._parsed.clear()
        self._cached_searcher = None
        self._boilerplate = None

    @staticmethod
    def _document(issue: Issue) -> tantivy.Document:
        doc = tantivy.Document()
        doc.add_integer("number", issue.number)
        doc.add_text("title", issue.title)
        renames = sorted(
            (e for e in issue.events or [] if e.event == "renamed" and e.rename_from is not None),
            key=lambda e: e.created_at,
        )
        if renames:
            doc.add_text(TITLE_BEFORE, renames[0].rename_from or "")
            doc.add_date(RENAMED_AT, renames[-1].created_at)
        doc.add_text("body", issue.body or "")
        for label in issue.labels:
            doc.add_text("labels", label)
        doc.add_text("state", issue.state)
        doc.add_text("state_reason", issue.state_reason or "")
        doc.add_date("created_at", issue.created_at)
        if issue.closed_at:
            doc.add_date("closed_at", issue.closed_at)
        doc.add_boolean("is_pull_request", issue.is_pull_request)
        if issue.duplicate_of is not None:
            doc.add_integer("duplicate_of", issue.duplicate_of)
        record = issue.model_dump(mode="json", exclude={"title", "body"}, exclude_none=True)
        doc.add_bytes("record", json.dumps(record, ensure_ascii=False).encode())
        return doc

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
        searcher = self.index.searcher()
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
