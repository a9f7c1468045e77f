"""A tantivy index of the checkout's source and docs files, searched for an issue's words.

Each file is one document: its path split into words, its identifiers split at camelCase and
snake_case, and its docstrings and comments (a docs file's whole text). Which files:
`likely.checkout` (`git ls-files`, else a walk, less vendored, generated, binary, symlinked and
oversized files), or a commit's files read from git objects (`likely.code_git`).

`CodeIndex.search` is BM25 over those fields; `CodeIndex.likely_files` is the plain ranking the
likely files had before they combined signals (stack frames, named paths, then BM25), kept as
the benchmark's baseline. The likely files the assistant shows come from `likely.rank`.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, NamedTuple
from urllib.parse import quote

import tantivy

from issue_assistant.labelnames import has_control
from issue_assistant.likely.checkout import (
    checkout_for,
    git_head,
    list_files,
    read_text,
)
from issue_assistant.likely.functions import Span, spans

if TYPE_CHECKING:
    from issue_assistant.config.sections import Config

log = logging.getLogger(__name__)

DOC_SUFFIXES = frozenset({".md", ".rst", ".txt", ".adoc"})
MAX_TEXT = 20_000  # characters of identifiers and of docs kept per file

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,63}")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_COMMENT = re.compile(
    r'"""(.*?)"""|\'\'\'(.*?)\'\'\'|/\*(.*?)\*/|(?:^|\s)(?:#|//|--|;)\s?(.*)$',
    re.DOTALL | re.MULTILINE,
)
# File "src/x.py", line 12  |  at f (src/x.js:10:5)  |  src/x.go:123  |  src/x.rs:1:2
_FRAME = re.compile(
    r'File "([^"\n]+)", line (\d+)(?:, in ([\w<>]+))?'
    r"|(?<![\w/.-])((?:[\w.-]+/)*[\w.-]+\.[A-Za-z][A-Za-z0-9]{0,5}):(\d+)"
)
_PATH = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)+[\w.-]+\.[A-Za-z][A-Za-z0-9]{0,5})\b")
_DEFINITION = re.compile(
    r"^[ \t]*(?:export[ \t]+|pub[ \t]+|async[ \t]+)*"
    r"(?:def|class|func|fn|function|interface|type|struct)\b[^\n]*",
    re.MULTILINE,
)
LINES_FOR = 10  # the first hits of a search get their line (finding it costs a scan)
_STOP = frozenset({"the", "and", "for", "with", "this", "that", "not", "self", "none", "true"})


@lru_cache(maxsize=65536)
def _split(name: str) -> tuple[str, ...]:
    parts: list[str] = []
    for piece in name.split("_"):
        parts += [p.lower() for p in _CAMEL.findall(piece)]
    return tuple(p for p in parts if len(p) > 1)


def ident_text(text: str, repeat: int = 4) -> str:
    """A file's identifiers for the index: each distinct one split (and whole), repeated by how
    often it occurs up to `repeat`, so term frequency still counts (fast on large files)."""
    out: list[str] = []
    for ident, n in Counter(_IDENT.findall(text)).items():
        parts = _split(ident)
        if len(parts) > 1:
            parts = (*parts, ident.lower().replace("_", ""))
        out += list(parts) * min(n, repeat)
    return " ".join(out)


def split_identifier(name: str) -> list[str]:
    """`parseTokens` -> parse, tokens; `cache_dir` -> cache, dir (lower case, 2+ letters)."""
    return list(_split(name))


def words(text: str, limit: int = 4000) -> list[str]:
    """Identifier parts of `text`, in order, with each whole identifier (lower case) too."""
    out: list[str] = []
    for m in _IDENT.finditer(text):
        ident = m.group(0)
        parts = list(_split(ident))
        out += parts
        if len(parts) > 1:
            out.append(ident.lower().replace("_", ""))
        if len(out) >= limit:
            break
    return out


def path_words(path: str) -> list[str]:
    return list(_path_words(path))


@lru_cache(maxsize=65536)
def _path_words(path: str) -> tuple[str, ...]:
    p = PurePosixPath(path)
    return (*words(" ".join([*p.parent.parts, p.stem])), p.name.lower())


def comments(text: str) -> str:
    found = [next((g for g in m.groups() if g), "") for m in _COMMENT.finditer(text)]
    return "\n".join(found)[:MAX_TEXT]


@dataclass(frozen=True)
class LikelyFile:
    path: str
    score: float
    line: int | None = None
    reason: str = "words"  # the main signal: "stack frame", "path", "words", ... (likely.signals)
    why: tuple[str, ...] = ()  # each signal's reason, for a person to check
    function: str | None = None  # the function at `line`, where a frame names it
    confidence: float | None = None  # the estimated chance the fix changes it (likely.rank)
    standing: str = ""  # what the estimate is of: "a file ranked first by a clear margin", ...

    def url(self, repository: str, sha: str | None) -> str | None:
        """A link into the repository at the checked-out commit (None without a commit)."""
        if not sha:
            return None
        anchor = f"#L{self.line}" if self.line else ""
        return f"https://github.com/{repository}/blob/{sha}/{quote(self.path)}{anchor}"


FIELDS = ("path_words", "idents", "docs")
BOOSTS = {"path_words": 2.0, "idents": 1.5}


def _schema() -> tantivy.Schema:
    b = tantivy.SchemaBuilder()
    b.add_text_field("path", stored=True, tokenizer_name="raw")
    b.add_text_field("path_words", stored=False, tokenizer_name="default")
    b.add_text_field("idents", stored=False, tokenizer_name="default")
    b.add_text_field("docs", stored=False, tokenizer_name="en_stem")
    return b.build()


class SourceFile(NamedTuple):
    """A file to index: its path, its text, and a key for its content (a blob id) or None."""

    path: str
    text: str
    key: str | None = None


def document_fields(path: str, text: str) -> tuple[str, str]:
    """The identifiers and the docs/comments indexed for a file (its path words aside)."""
    is_doc = PurePosixPath(path).suffix.lower() in DOC_SUFFIXES
    return ident_text(text[: MAX_TEXT * 10]), text[:MAX_TEXT] if is_doc else comments(text)


def checkout_files(root: Path, max_file_kb: int, max_files: int) -> Iterator[SourceFile]:
    """The indexable files of a checkout folder (see `list_files` and `read_text`)."""
    count = 0
    for rel in list_files(root):
        if count >= max_files:
            return
        text = read_text(root, rel, max_file_kb * 1024)
        if text is not None:
            count += 1
            yield SourceFile(rel, text)


class CodeIndex:
    """One checkout's files in an in-memory tantivy index (built once per run: the moment holds it).

    `CodeIndex(root)` reads a folder; `CodeIndex.from_files` takes the files from elsewhere (a
    commit read from git objects: `likely.code_git`), with `memo` keeping each content's fields
    across indexes so a file shared by many commits is analysed once.
    """

    def __init__(self, root: str | Path, *, max_file_kb: int = 256, max_files: int = 20_000):
        self.root: Path | None = Path(root).resolve()
        self.sha = git_head(self.root)
        self._build(checkout_files(self.root, max_file_kb, max_files))

    @classmethod
    def from_files(
        cls,
        files: Iterable[SourceFile],
        *,
        sha: str | None = None,
        memo: dict[str, tuple[str, str]] | None = None,
    ) -> CodeIndex:
        self = cls.__new__(cls)
        self.root, self.sha = None, sha
        self._build(files, memo)
        return self

    def _build(
        self, files: Iterable[SourceFile], memo: dict[str, tuple[str, str]] | None = None
    ) -> None:
        self.schema = _schema()
        self.index = tantivy.Index(self.schema)
        self.files: dict[str, str] = {}  # path -> text (kept for line lookups)
        self.keys: dict[str, str | None] = {}  # path -> its content's key (a blob id)
        self.idents: dict[str, str] = {}  # path -> its identifier words (for reasons)
        self.skipped_names = 0  # files left out for a control character in their name
        self.change((), files, sha=self.sha, memo=memo)

    def change(
        self,
        removed: Iterable[str],
        added: Iterable[SourceFile],
        *,
        sha: str | None,
        memo: dict[str, tuple[str, str]] | None = None,
    ) -> None:
        """Drop the `removed` paths and index the `added` files (a path both removed and added
        is replaced): moving the index from one commit to the next re-indexes what changed."""
        writer = self.index.writer(heap_size=50_000_000, num_threads=1)
        left_out = 0
        for path in removed:
            if path in self.files:
                writer.delete_documents_by_term("path", path)
                del self.files[path], self.keys[path], self.idents[path]
        for f in added:
            if has_control(f.path):  # a name that could carry Markdown: never indexed
                left_out += 1
                continue
            if f.path in self.files:
                writer.delete_documents_by_term("path", f.path)
            self.files[f.path], self.keys[f.path] = f.text, f.key
            fields = memo.get(f.key) if memo is not None and f.key else None
            if fields is None:
                fields = document_fields(f.path, f.text)
                if memo is not None and f.key:
                    memo[f.key] = fields
            self.idents[f.path] = fields[0]
            doc = tantivy.Document()
            doc.add_text("path", f.path)
            doc.add_text("path_words", " ".join(path_words(f.path)))
            doc.add_text("idents", fields[0])
            doc.add_text("docs", fields[1])
            writer.add_document(doc)
        writer.commit()
        writer.wait_merging_threads()
        if left_out:
            self.skipped_names += left_out
            log.warning("code: %d files with a control character in their name left out", left_out)
        self.index.reload()
        self.sha = sha
        self._searcher = self.index.searcher()
        self._by_suffix: dict[str, list[str]] = {}
        for rel in self.files:
            parts = rel.split("/")
            for i in range(len(parts) - 1):
                self._by_suffix.setdefault("/".join(parts[i:]), []).append(rel)
        # derived from the files, computed when first asked (`packages`, `by_name`, `spans_of`)
        self._packages: set[str] | None = None
        self._by_name: dict[str, list[str]] | None = None
        self._spans: dict[str, list[Span]] = {}

    def __len__(self) -> int:
        return len(self.files)

    def packages(self) -> set[str]:
        """The names of the folders holding an `__init__.py` (Python packages)."""
        if self._packages is None:
            self._packages = {
                PurePosixPath(p).parent.name for p in self.files if p.endswith("/__init__.py")
            } - {""}
        return self._packages

    def by_name(self) -> dict[str, list[str]]:
        """The indexed paths by file name (`mod.py` -> every `.../mod.py`)."""
        if self._by_name is None:
            self._by_name = {}
            for p in self.files:
                self._by_name.setdefault(PurePosixPath(p).name, []).append(p)
        return self._by_name

    def spans_of(self, path: str) -> list[Span]:
        """The functions of the indexed file `path` and their lines (`functions.spans`)."""
        if path not in self._spans:
            self._spans[path] = spans(self.files.get(path, ""), path)
        return self._spans[path]

    def resolve(self, named: str) -> str | None:
        """The indexed file a path from a report names: exact, else the longest unique suffix
        of two or more parts (`/usr/lib/python3/site-packages/pkg/mod.py` -> `src/pkg/mod.py`)."""
        named = named.replace("\\", "/").lstrip("./")
        if named in self.files:
            return named
        parts = PurePosixPath(named).parts
        for i in range(len(parts) - 1):
            hits = self._by_suffix.get("/".join(parts[i:]))
            if hits and len(hits) == 1 and len(parts) - i >= 2:
                return hits[0]
        return None

    def named_files(self, text: str) -> list[LikelyFile]:
        """Files named in stack frames (with the line), then by path, in order of appearance."""
        out: dict[str, LikelyFile] = {}
        for m in _FRAME.finditer(text):
            named, line = (m[1], m[2]) if m[1] else (m[4], m[5])
            rel = self.resolve(named)
            if rel and rel not in out:
                out[rel] = LikelyFile(rel, 0.0, int(line), "stack frame")
        for m in _PATH.finditer(text):
            rel = self.resolve(m[1])
            if rel and rel not in out:
                out[rel] = LikelyFile(rel, 0.0, None, "path")
        # the last frame of a Python traceback is where it failed: frames read innermost first
        frames = [f for f in out.values() if f.reason == "stack frame"]
        others = [f for f in out.values() if f.reason != "stack frame"]
        return frames[::-1] + others

    def query_words(self, text: str, limit: int = 64, ignore: frozenset[str] = frozenset()):
        """The words of `text` to search for: identifier parts, less stop words and `ignore`."""
        seen: dict[str, None] = {}
        for w in words(text):
            if len(w) > 2 and w not in _STOP and w not in ignore and not w.isdigit():
                seen.setdefault(w, None)
            if len(seen) >= limit:
                break
        return list(seen)

    def search(
        self,
        text: str,
        limit: int = 5,
        ignore: frozenset[str] = frozenset(),
        fields: tuple[str, ...] = FIELDS,
        title: str = "",
    ) -> list[LikelyFile]:
        """BM25 over paths (x2), identifiers (x1.5) and docs/comments for the words of `text`
        (or over some of those `fields` alone); the words of `title`, if given, count twice."""
        heading = self.query_words(title, limit=16, ignore=ignore) if title else []
        terms = heading + [w for w in self.query_words(text, ignore=ignore) if w not in heading]
        if not terms or not self.files:
            return []
        query = " ".join([f"{w}^2" for w in heading] + terms[len(heading) :])
        q = self.index.parse_query(query, list(fields), field_boosts=BOOSTS)
        out: list[LikelyFile] = []
        for rank, (score, address) in enumerate(self._searcher.search(q, limit=limit).hits):
            rel = self._searcher.doc(address).to_dict()["path"][0]
            line = self.first_line(rel, terms) if rank < LINES_FOR else None
            out.append(LikelyFile(rel, float(score), line, "words"))
        return out

    def first_line(self, rel: str, terms: list[str]) -> int | None:
        """The first line defining (else mentioning) one of the query's identifiers."""
        text = self.files.get(rel, "")
        wanted = set(terms)
        for m in _DEFINITION.finditer(text):
            if set(words(m[0], 64)) & wanted:
                return text.count("\n", 0, m.start()) + 1
        lower = text.lower()
        found = [at for at in (lower.find(t) for t in wanted) if at >= 0]
        return lower.count("\n", 0, min(found)) + 1 if found else None

    def shared_terms(self, rel: str, terms: list[str]) -> list[str]:
        """The query's `terms` among the file's identifier words and path words."""
        have = f" {self.idents.get(rel, '')} {' '.join(path_words(rel))} "
        return [t for t in terms if f" {t} " in have]

    def likely_files(self, text: str, limit: int = 5, project: str = "") -> list[LikelyFile]:
        """The files most likely concerned by an issue's text, best first.

        The words of `project` (the repository's name) are not searched for: nearly every
        report names the project, and its name says nothing about where the problem is.
        """
        named = self.named_files(text)
        seen = {f.path for f in named}
        ranked = list(named)
        ignore = frozenset(words(project))
        for hit in self.search(text, limit=limit + len(named), ignore=ignore):
            if hit.path not in seen:
                ranked.append(hit)
                seen.add(hit.path)
        return ranked[:limit]


class LazyCodeIndex:
    """A `CodeIndex` built on first use (the MCP server answers `initialize` before a large
    checkout is read): every attribute is the built index's."""

    def __init__(self, root: str | Path, *, max_file_kb: int = 256, max_files: int = 20_000):
        self._args = (root, max_file_kb, max_files)
        self._built: CodeIndex | None = None

    def __getattr__(self, name: str):  # noqa: ANN204 - whatever the index's attribute is
        if self._built is None:
            root, kb, files = self._args
            self._built = CodeIndex(Path(root).resolve(), max_file_kb=kb, max_files=files)
        return getattr(self._built, name)


def code_index_for(config: Config, full_name: str) -> CodeIndex | None:
    """The code index `config` (its `[code]` section) asks for, or None."""
    code = config.code
    root = checkout_for(code.checkout, full_name)
    if root is None or code.likely_files <= 0:
        return None
    return CodeIndex(root.resolve(), max_file_kb=code.max_file_kb, max_files=code.max_files)
