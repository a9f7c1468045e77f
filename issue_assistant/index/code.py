"""A tantivy index of the checkout's source and docs files, and the "likely files" for an issue.

Each file is one document: its path split into words, its identifiers split at camelCase and
snake_case, and its docstrings and comments (a docs file's whole text). Which files: `git
ls-files` in a git checkout (so `.gitignore` holds), else a walk; either way vendored and
generated folders, binaries, symlinks and files over the size cap are left out.

`likely_files(text)` ranks files by BM25 for the words of an issue; a file named in a stack frame
or by its path in the text ranks first, with the frame's line.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import Literal, NamedTuple

import tantivy

SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        "vendor",
        "vendored",
        "third_party",
        "third-party",
        "build",
        "dist",
        "target",
        "out",
        "__pycache__",
        ".venv",
        "venv",
        "env",
        ".tox",
        ".nox",
        "site-packages",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".cache",
        "coverage",
        "htmlcov",
        ".next",
        ".idea",
        ".vscode",
        "bower_components",
        "Pods",
        "generated",
        "_build",
    }
)
SKIP_SUFFIXES = (".min.js", ".min.css", ".map", ".lock", ".svg", ".pb.go", "_pb2.py")
SKIP_NAMES = frozenset({"package-lock.json", "yarn.lock", "pnpm-lock.yaml", "poetry.lock"})
DOC_SUFFIXES = frozenset({".md", ".rst", ".txt", ".adoc"})
MAX_TEXT = 20_000  # characters of identifiers and of docs kept per file

Kind = Literal["source", "test", "doc"]
_TEST = re.compile(r"(^|/)(tests?|testing)/|(^|/)test_[^/]*$|_tests?\.py$|(^|/)conftest\.py$")
_DOC = re.compile(r"\.(md|mdx|rst|txt|adoc|ipynb)$", re.IGNORECASE)
_DOC_DIRS = ("docs/", "doc/", "notebooks/")


def file_kind(path: str) -> Kind:
    """test (tests/, test_*.py, conftest.py), doc (docs/, Markdown, a changelog), else source."""
    if _TEST.search(path):
        return "test"
    name = PurePosixPath(path).name.upper()
    if path.startswith(_DOC_DIRS) or _DOC.search(path) or name.startswith(("CHANGELOG", "CHANGES")):
        return "doc"
    return "source"


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


@lru_cache(maxsize=65536)
def skipped(path: str) -> bool:
    p = PurePosixPath(path)
    if any(part in SKIP_DIRS for part in p.parts[:-1]):
        return True
    return p.name in SKIP_NAMES or p.name.endswith(SKIP_SUFFIXES)


def _git(root: Path) -> list[str]:
    """git for `root`, trusted even when another user owns it (the Action's container runs as
    root over the runner's checkout, which git otherwise refuses as "dubious ownership")."""
    return ["git", "-c", f"safe.directory={Path(root).resolve()}"]


def git_head(root: Path) -> str | None:
    """The checked-out commit, or None outside a git checkout."""
    try:
        out = subprocess.run(
            [*_git(root), "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=20
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    sha = out.stdout.strip() if out.returncode == 0 else ""
    from issue_assistant.settings import current

    settings = current()
    workspace = settings.workspace
    if not sha and workspace and Path(workspace).resolve() == Path(root).resolve():
        sha = settings.sha or ""  # the commit actions/checkout checked out
    return sha if re.fullmatch(r"[0-9a-f]{40}", sha) else None


def list_files(root: Path) -> list[str]:
    """Candidate paths (POSIX, relative to `root`): `git ls-files`, else a walk."""
    try:
        out = subprocess.run(
            [*_git(root), "ls-files", "-z"], cwd=root, capture_output=True, timeout=60, check=False
        )
        listed = out.returncode == 0 and (root / ".git").exists()
    except (OSError, subprocess.TimeoutExpired):
        listed = False
    if listed:
        paths = [p for p in out.stdout.decode("utf-8", "replace").split("\0") if p]
    else:
        paths = []
        for here, dirs, names in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
            rel = Path(here).relative_to(root).as_posix()
            prefix = "" if rel == "." else rel + "/"
            paths += [prefix + n for n in names]
    return sorted(p for p in paths if not skipped(p))


def read_text(root: Path, rel: str, max_bytes: int) -> str | None:
    """The file's text, or None when it is a symlink, outside `root`, too large or binary."""
    f = root / rel
    try:
        if f.is_symlink() or not f.is_file():
            return None
        if not f.resolve().is_relative_to(root.resolve()):
            return None
        if f.stat().st_size > max_bytes:
            return None
        data = f.read_bytes()
    except OSError:
        return None
    if b"\0" in data[:8192]:
        return None
    return data.decode("utf-8", "replace")


@dataclass(frozen=True)
class LikelyFile:
    path: str
    score: float
    line: int | None = None
    reason: str = "words"  # the main signal: "stack frame", "path", "words", ... (localize)
    why: tuple[str, ...] = ()  # each signal's reason, for a person to check
    function: str | None = None  # the function at `line`, where a frame names it
    confidence: float | None = None  # the estimated chance the fix changes it (localize)

    def url(self, repository: str, sha: str | None) -> str | None:
        """A link into the repository at the checked-out commit (None without a commit)."""
        if not sha:
            return None
        anchor = f"#L{self.line}" if self.line else ""
        return f"https://github.com/{repository}/blob/{sha}/{self.path}{anchor}"


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
    """One checkout's files in an in-memory tantivy index (built once per process and root).

    `CodeIndex(root)` reads a folder; `CodeIndex.from_files` takes the files from elsewhere (a
    commit read from git objects: `index.code_git`), with `memo` keeping each content's fields
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
        for path in removed:
            if path in self.files:
                writer.delete_documents_by_term("path", path)
                del self.files[path], self.keys[path], self.idents[path]
        for f in added:
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
        self.index.reload()
        self.sha = sha
        self._searcher = self.index.searcher()
        self._by_suffix: dict[str, list[str]] = {}
        for rel in self.files:
            parts = rel.split("/")
            for i in range(len(parts) - 1):
                self._by_suffix.setdefault("/".join(parts[i:]), []).append(rel)
        for cached in ("_packages", "_by_name", "_code_text", "_spans"):  # of the old files
            self.__dict__.pop(cached, None)

    def __len__(self) -> int:
        return len(self.files)

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
    ) -> list[LikelyFile]:
        """BM25 over paths (x2), identifiers (x1.5) and docs/comments for the words of `text`
        (or over some of those `fields` alone)."""
        terms = self.query_words(text, ignore=ignore)
        if not terms or not self.files:
            return []
        q = self.index.parse_query(" ".join(terms), list(fields), field_boosts=BOOSTS)
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


_CACHE: dict[tuple[Path, int, int], CodeIndex] = {}


def open_code_index(root: str | Path, *, max_file_kb: int = 256, max_files: int = 20_000):
    """The code index of `root`, built on first use in this process."""
    key = (Path(root).resolve(), max_file_kb, max_files)
    if key not in _CACHE:
        _CACHE[key] = CodeIndex(key[0], max_file_kb=max_file_kb, max_files=max_files)
    return _CACHE[key]


def origin_names(root: Path, full_name: str) -> bool:
    """Whether the checkout at `root` is a clone of `full_name` (its `origin` remote says so)."""
    try:
        out = subprocess.run(
            [*_git(root), "config", "--get", "remote.origin.url"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    url = out.stdout.strip().lower().removesuffix(".git")
    return out.returncode == 0 and url.endswith(full_name.lower())


def checkout_for(setting: str, full_name: str) -> Path | None:
    """The checkout `[code] checkout` names: "" none; "auto" the Action's workspace (else the
    current directory) when it is a clone of `full_name`; else that folder, which must exist."""
    from issue_assistant.errors import UserError
    from issue_assistant.settings import current

    if not setting:
        return None
    if setting == "auto":
        root = Path(current().workspace or Path.cwd())
        if (root / ".git").exists() and origin_names(root, full_name):
            return root
        return None
    root = Path(setting)
    if not root.is_dir():
        raise UserError("[code] checkout: no such folder", where=str(root))
    return root


def code_index_for(config: object, full_name: str) -> CodeIndex | None:
    """The code index `config` (its `[code]` section) asks for, or None."""
    code = config.code  # type: ignore[attr-defined]
    root = checkout_for(code.checkout, full_name)
    if root is None or code.likely_files <= 0:
        return None
    return open_code_index(root, max_file_kb=code.max_file_kb, max_files=code.max_files)
