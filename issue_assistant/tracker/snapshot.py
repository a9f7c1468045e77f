"""Read and write the snapshot format (JSON Lines, optionally gzip): line 1 the repository."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import zlib
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, BinaryIO, Protocol

from pydantic import BaseModel, ConfigDict, ValidationError

from issue_assistant.atomic import write_atomic, write_atomic_with
from issue_assistant.errors import UserError
from issue_assistant.tracker.models import Discussion, Issue, Release, Repository


class StoredIssues(Protocol):
    """What `IndexedSnapshot` reads from (the issue index, `index/search.py`, is one)."""

    def stored(self, number: int) -> Issue | None: ...

    def all_stored(self) -> Iterable[Issue]: ...

    def __len__(self) -> int: ...


def _open_text(path: Path, mode: str) -> IO[str]:
    if path.suffix == ".gz":
        return gzip.open(path, mode + "t", encoding="utf-8")  # type: ignore[return-value]
    return open(path, mode, encoding="utf-8")


def _open_bytes(path: Path) -> IO[bytes]:
    if path.suffix == ".gz":
        return gzip.open(path, "rb")  # type: ignore[return-value]
    return open(path, "rb")


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    field = ".".join(str(p) for p in err["loc"]) or "(line)"
    return f"field {field}: {err['msg']}"


class Snapshot:
    """A repository's tracker frozen at `repository.fetched_at`; implements `Tracker`."""

    def __init__(
        self,
        repository: Repository,
        issues: Iterable[Issue],
        path: Path | None = None,
        *,
        releases: Iterable[Release] = (),
        discussions: Iterable[Discussion] = (),
    ):
        self._repository = repository
        self._issues: dict[int, Issue] = {}
        for issue in sorted(issues, key=lambda i: (i.created_at, i.number)):
            self._issues[issue.number] = issue
        self.path = path
        self._releases = sorted(releases, key=lambda r: r.published_at, reverse=True)
        self._discussions = sorted(discussions, key=lambda d: (d.created_at, d.number))

    def releases(self) -> list[Release] | None:
        """Published releases, newest first; None when this snapshot does not know them."""
        if self._releases or "releases" in self._repository.includes:
            return list(self._releases)
        return None

    def discussions(self) -> list[Discussion] | None:
        """Discussions, oldest first; None when this snapshot does not know them."""
        if self._discussions or "discussions" in self._repository.includes:
            return list(self._discussions)
        return None

    @property
    def repository(self) -> Repository:
        return self._repository

    @property
    def point_in_time(self) -> None:
        return None

    def get_issue(self, number: int) -> Issue:
        return self._issues[number]

    def all_issues(self) -> Iterator[Issue]:
        return iter(self._issues.values())

    def __len__(self) -> int:
        return len(self._issues)

    def __contains__(self, number: object) -> bool:
        return number in self._issues


def file_stamp(path: str | os.PathLike[str]) -> dict:
    """What identifies a snapshot file's version cheaply: its path, size and mtime."""
    p = Path(path).resolve()
    st = p.stat()
    return {"path": str(p), "size": st.st_size, "mtime_ns": st.st_mtime_ns}


def read_repository(path: str | os.PathLike[str]) -> Repository:
    """Line 1 of a snapshot only (cheap, even for a large file)."""
    p = Path(path)
    if not p.is_file():
        raise UserError("snapshot file not found", where=str(p))
    try:
        with _open_text(p, "r") as fh:
            line = fh.readline()
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise UserError(f"cannot read snapshot ({exc})", where=str(p)) from None
    except UnicodeDecodeError as exc:
        raise UserError(f"not UTF-8 text ({exc.reason})", where=f"{p}:1") from None
    where = f"{p}:1"
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        raise UserError(f"not JSON ({exc.msg})", where=where) from None
    if not isinstance(record, dict) or record.get("kind") != "repository":
        raise UserError("line 1 must be the repository record", where=where)
    try:
        return Repository.model_validate(record)
    except ValidationError as exc:
        raise UserError(_first_error(exc), where=where) from None


EXTRAS = "snapshot-extras.json"


class Extras(BaseModel):
    """A snapshot's releases and discussions kept beside its index (None: not known), so that a
    warm run, which reads no snapshot line, sees what a cold one sees."""

    model_config = ConfigDict(extra="forbid")

    stamp: dict
    releases: list[Release] | None = None
    discussions: list[Discussion] | None = None

    def save(self, directory: Path) -> None:
        write_atomic(directory / EXTRAS, self.model_dump_json(), own=True)

    @classmethod
    def load(cls, directory: Path, stamp: dict) -> Extras | None:
        """The kept extras of the snapshot file `stamp` names, or None (then it is read)."""
        try:
            extras = cls.model_validate_json((directory / EXTRAS).read_bytes())
        except (OSError, ValueError):
            return None
        return extras if extras.stamp == stamp else None


class IndexedSnapshot:
    """A snapshot served from its index's stored records (a `Tracker`), without parsing it.

    Used when the index was last brought up to date from this very file (same size and mtime);
    its releases and discussions come from the `Extras` kept with the index.
    """

    def __init__(
        self, repository: Repository, index: StoredIssues, path: Path, extras: Extras | None = None
    ) -> None:
        self._repository = repository
        self._index = index
        self.path = path
        self._extras = extras

    def releases(self) -> list[Release] | None:
        known = self._extras.releases if self._extras else None
        return list(known) if known is not None else None

    def discussions(self) -> list[Discussion] | None:
        known = self._extras.discussions if self._extras else None
        return list(known) if known is not None else None

    @property
    def repository(self) -> Repository:
        return self._repository

    @property
    def point_in_time(self) -> None:
        return None

    def get_issue(self, number: int) -> Issue:
        issue = self._index.stored(number)
        if issue is None:
            raise KeyError(number)
        return issue

    def all_issues(self) -> Iterator[Issue]:
        """Every issue, oldest first (reads the whole index)."""
        return iter(sorted(self._index.all_stored(), key=lambda i: (i.created_at, i.number)))

    def __len__(self) -> int:
        return len(self._index)

    def __contains__(self, number: object) -> bool:
        return isinstance(number, int) and self._index.stored(number) is not None


def line_hash(line: bytes) -> int:
    """What identifies an issue line's exact content (64 bits of BLAKE2b)."""
    return int.from_bytes(hashlib.blake2b(line.strip(), digest_size=8).digest(), "little")


@dataclass
class Scan:
    """A snapshot read past the issue lines already known (`read_changed`)."""

    repository: Repository
    issues: list[Issue]  # the issues whose line is not among the known ones
    releases: list[Release]
    discussions: list[Discussion]
    lines: list[int]  # the hash of every issue line, known or not
    unchanged: int = 0

    def snapshot(self, path: Path) -> Snapshot:
        """The snapshot of what was read (whole when nothing was known)."""
        return Snapshot(
            self.repository,
            self.issues,
            path=path,
            releases=self.releases,
            discussions=self.discussions,
        )


def read_changed(path: str | os.PathLike[str], known: Collection[int] = ()) -> Scan:
    """Read a snapshot, parsing and validating only the issue lines whose hash is not in
    `known` (every line when it is empty); a bad line is a UserError naming the file, line and
    field. Releases and discussions are always read (they are few)."""
    p = Path(path)
    if not p.is_file():
        raise UserError("snapshot file not found", where=str(p))
    repository: Repository | None = None
    scan = Scan(None, [], [], [], [])  # type: ignore[arg-type] - set from line 1 below
    try:
        with _open_bytes(p) as fh:
            for lineno, raw in enumerate(fh, start=1):
                if not raw.strip():
                    continue
                where = f"{p}:{lineno}"
                if lineno > 1:
                    h = line_hash(raw)
                    if h in known:  # an issue line read (and validated) before
                        scan.lines.append(h)
                        scan.unchanged += 1
                        continue
                else:
                    h = 0
                try:
                    record = json.loads(raw.decode("utf-8"))
                except json.JSONDecodeError as exc:
                    raise UserError(f"not JSON ({exc.msg})", where=where) from None
                if not isinstance(record, dict):
                    raise UserError("expected a JSON object", where=where)
                kind = record.get("kind")
                try:
                    if lineno == 1:
                        if kind != "repository":
                            raise UserError("line 1 must be the repository record", where=where)
                        repository = Repository.model_validate(record)
                        if repository.version != 1:
                            raise UserError(
                                f"unsupported snapshot version {repository.version}", where=where
                            )
                    elif kind == "issue":
                        scan.issues.append(Issue.model_validate(record))
                        scan.lines.append(h)
                    elif kind == "release":
                        scan.releases.append(Release.model_validate(record))
                    elif kind == "discussion":
                        scan.discussions.append(Discussion.model_validate(record))
                    # any other kind is from a newer writer: ignored, so the format can grow
                except ValidationError as exc:
                    raise UserError(_first_error(exc), where=where) from None
    except UnicodeDecodeError as exc:
        read = len(scan.issues) + scan.unchanged + (repository is not None)
        message = f"not UTF-8 text ({exc.reason}), after {read} good record(s)"
        raise UserError(message, where=str(p)) from None
    except (OSError, EOFError, gzip.BadGzipFile, zlib.error) as exc:
        raise UserError(f"cannot read snapshot ({exc})", where=str(p)) from None
    if repository is None:
        raise UserError("empty snapshot (no repository line)", where=str(p))
    scan.repository = repository
    return scan


def read_snapshot(path: str | os.PathLike[str]) -> Snapshot:
    """Parse a snapshot file; a bad line is a UserError naming the file, line and field."""
    return read_changed(path).snapshot(Path(path))


def issue_record(issue: Issue) -> dict:
    """The snapshot line for an issue (unknown events/comments stay absent)."""
    data = issue.model_dump(mode="json", exclude_none=True)
    data = {"kind": "issue", **data}
    for key in ("closed_at", "state_reason", "body"):
        data.setdefault(key, None)
    return data


def release_record(release: Release) -> dict:
    return release.model_dump(mode="json", exclude_none=True)


def discussion_record(discussion: Discussion) -> dict:
    data = discussion.model_dump(mode="json", exclude_none=True)
    data.setdefault("answer_chosen_at", None)
    return data


def write_snapshot(
    path: str | os.PathLike[str],
    repository: Repository,
    issues: Iterable[Issue],
    *,
    releases: Iterable[Release] = (),
    discussions: Iterable[Discussion] = (),
) -> None:
    """Write atomically: a temporary file beside the target, renamed into place when complete."""
    p = Path(path)

    def lines(raw: BinaryIO) -> None:
        packed = gzip.GzipFile(fileobj=raw, mode="wb") if p.suffix == ".gz" else raw
        fh = io.TextIOWrapper(packed, encoding="utf-8")
        fh.write(json.dumps(repository.model_dump(mode="json", exclude_none=True)) + "\n")
        for issue in sorted(issues, key=lambda i: i.number):
            fh.write(json.dumps(issue_record(issue), ensure_ascii=False) + "\n")
        for release in sorted(releases, key=lambda r: r.published_at):
            fh.write(json.dumps(release_record(release), ensure_ascii=False) + "\n")
        for discussion in sorted(discussions, key=lambda d: d.number):
            fh.write(json.dumps(discussion_record(discussion), ensure_ascii=False) + "\n")
        fh.flush()
        fh.detach()
        if packed is not raw:
            packed.close()  # the gzip trailer; `raw` stays open for the rename

    write_atomic_with(p, lines)
