"""The issue index's folder: the tantivy documents and what is kept beside them (the meta file,
the content hashes, the snapshot lines it was built from, the parsed records, the vectors),
updated incrementally; `index.search` asks it questions."""

from __future__ import annotations

import array
import hashlib
import json
import logging
import shutil
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import tantivy

from issue_assistant.atomic import make_room, write_atomic, write_atomic_with
from issue_assistant.cachelock import holding
from issue_assistant.tracker.models import Issue, Repository

log = logging.getLogger(__name__)

PARSED = 20_000  # parsed records kept in memory

if TYPE_CHECKING:
    from issue_assistant.config.sections import VectorKind
    from issue_assistant.index.boilerplate import Boilerplate
    from issue_assistant.index.embeddings import Embedder
    from issue_assistant.index.vectors import TextVectors, VectorStore

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


def _fingerprint(issue: Issue) -> str:
    keys = ("title", "body", "labels", "state", "state_reason", "closed_at", "duplicate_of")
    data = issue.model_dump(mode="json", include=set(keys))
    return hashlib.sha1(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]


class IndexFolder:
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
        self._take_meta(meta)
        self.index = self._open()
        if "hashes" in meta and meta["hashes"]:
            self._write_meta(hashes=True)  # once: the next warm open reads the small file only
        self._df: dict[tuple[str, str], int] = {}
        self._counts: dict[tuple[tuple[str, ...], bool, datetime], int] = {}
        # whether an issue was renamed at or after a moment, per moment (`_titles_then`)
        self._renamed: dict[datetime, bool] = {}
        # what readers derive from this index's statistics, kept until it changes (`memo`)
        self.memo: dict = {}
        self._cached_searcher: tantivy.Searcher | None = None
        self._addresses: dict[int, tantivy.DocAddress] = {}  # hits of `ranked`, this searcher
        self._parsed: dict[int, Issue] = {}
        # The vectors that find candidates beside BM25: sentence embeddings or the shipped word
        # vectors (`enable_vectors`), None for BM25 alone.
        self.vectors: VectorStore | None = None
        self._sentences = False
        self._embedder: TextVectors | None = None
        self._embedder_loader: Callable[[], TextVectors | None] | None = None
        self._boilerplate: Boilerplate | None = None

    def _take_meta(self, meta: dict) -> None:
        """This instance's view of the index as the meta file says it is."""
        # an index written before the hashes had their own file keeps them in the meta file
        self._hashes_loaded: dict[str, str] | None = meta.get("hashes")
        self._count: int = int(meta.get("count", len(self._hashes_loaded or {})))
        # how many writes the meta file has seen: another writer's since this one read it make
        # this view stale (`_writing`)
        self._generation: int = int(meta.get("generation", 0))
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

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """Hold the folder's lock to change the index, this instance's view first brought up to
        date when another instance or process wrote since it read the meta file: a view whose
        count of issues is older than the hashes file took the hashes for lost and re-indexed
        only its own issues, dropping the other writer's."""
        with holding(self.path):
            meta = self._read_meta()
            if int(meta.get("generation", 0)) != self._generation:
                self._take_meta(meta)
                self._reloaded()
            yield

    # ---- embeddings ------------------------------------------------------------------------

    def enable_vectors(self, kind: VectorKind) -> None:
        """Keep `kind` of vectors beside the index ("off": none, BM25 alone); sentence
        embeddings without their packages give the word vectors, with a warning."""
        if kind == "sentences":
            from issue_assistant.index.embeddings import (
                MissingPackages,
                load_embedder,
                missing,
                model_files,
            )

            try:
                model_files()
            except MissingPackages as exc:
                log.warning(
                    "embeddings: %s; the word vectors shipped with the package find candidates",
                    missing(exc),
                )
                kind = "words"
            else:
                self.enable_embeddings(load_embedder)
        if kind == "words":
            self.enable_word_vectors()

    def enable_embeddings(self, loader: Callable[[], Embedder | None]) -> None:
        """Keep sentence embeddings beside the index; the model is loaded (by `loader`) only
        when needed."""
        from issue_assistant.index.embeddings import DIM, MODEL_ID
        from issue_assistant.index.vectors import VectorStore

        self.vectors = VectorStore(self.path / "vectors", MODEL_ID, DIM)
        self._sentences = True
        self._embedder_loader = loader

    def enable_word_vectors(self) -> None:
        """Keep the shipped word vectors beside the index (`index/word_vectors.py`): they find
        candidates, and nothing reads their cosine as meaning."""
        from issue_assistant.index.vectors import VectorStore
        from issue_assistant.index.word_vectors import DIM, MODEL_ID, load_word_vectors

        self.vectors = VectorStore(self.path / "word-vectors", MODEL_ID, DIM)
        self._sentences = False
        self._embedder_loader = load_word_vectors

    @property
    def sentences(self) -> VectorStore | None:
        """The vectors when they are sentence embeddings, whose cosine the duplicate score and
        the label model read as meaning; None with word vectors or none."""
        return self.vectors if self._sentences else None

    @property
    def embedder(self) -> TextVectors | None:
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
        with self._writing():
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
        self._generation += 1
        meta: dict = {
            "schema_version": SCHEMA_VERSION,
            "count": self._count,
            "source": self.source,
            "generation": self._generation,
        }
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
        with self._writing():
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
            with self._writing():
                self.building = building
                self._write_meta()

    def label_names(self) -> set[str]:
        """Every label spelling the indexed issues and pull requests carry (kept with the index,
        grown by each update; an index made before they were kept reads its documents once)."""
        if self._label_names is None:
            with self._writing():
                if self._label_names is None:  # another writer may have read them meanwhile
                    self._label_names = self._labels_of_documents()
                    self._write_meta()
        return self._label_names or set()

    def _labels_of_documents(self) -> set[str]:
        """Every label spelling on the stored documents (read once, for an older index)."""
        searcher = self._searcher()
        names: set[str] = set()
        for _, address in searcher.search(
            tantivy.Query.all_query(), max(searcher.num_docs, 1)
        ).hits:
            names.update(searcher.doc(address).to_dict().get("labels", []))
        return names

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

    def _searcher(self) -> tantivy.Searcher:
        if self._cached_searcher is None:
            self._cached_searcher = self.index.searcher()
        return self._cached_searcher

    def update(self, issues: Iterable[Issue], *, whole: bool = False) -> int:
        """Add new issues and re-index changed ones; returns how many documents were written.
        With `whole`, `issues` is everything the tracker holds: the indexed issues not among
        them (deleted, transferred) are removed, with their vectors."""
        with self._writing():
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
        with self._writing():
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
