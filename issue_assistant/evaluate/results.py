"""The results file: JSON Lines, a run header then one record per issue, flushed line by line.

An interrupted run leaves at most a partial last line, which readers ignore and `--resume`
truncates away before appending. `merge` joins the files of several shards.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Iterable
from datetime import date, datetime
from pathlib import Path
from typing import IO, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from issue_assistant.decision import Decision
from issue_assistant.errors import UserError
from issue_assistant.evaluate.gold import Gold

log = logging.getLogger(__name__)


class RunHeader(BaseModel):
    """Line 1: what was run, on what, and how the issues were chosen."""

    model_config = ConfigDict(extra="ignore")

    kind: Literal["run"] = "run"
    version: Literal[1] = 1
    repository: str
    engine: str
    model: str = ""
    strategy: str = ""
    # What found the candidates beside BM25 (`[index]`: sentences, words or off; "" unknown).
    vectors: str = ""
    day: date
    source: str = ""
    requested: int
    selected: int
    window: int = 0
    examined: int = 0
    qualified: int = 0
    skipped_assistant: int = 0
    # Per reason, the closed issues of the window that did not qualify.
    not_qualified: dict[str, int] = {}
    shard: str | None = None

    def same_run(self, other: RunHeader) -> bool:
        keys = ("repository", "engine", "model", "strategy", "vectors", "requested", "shard")
        return all(getattr(self, k) == getattr(other, k) for k in keys)


class IssueResult(BaseModel):
    """One issue: the engine's decision (with its usage), the gold, and what went wrong."""

    model_config = ConfigDict(extra="ignore")

    kind: Literal["issue"] = "issue"
    number: int
    title: str = ""
    created_at: datetime
    position: int = 0
    decision: Decision
    gold: Gold
    proposed_sure: bool = False
    error: str | None = None
    answered: bool = True
    # The likely files (the first 10) and the functions at their lines (`path::name`), the files
    # and functions the fixing pull request changed (None: unknown), and the areas whose paths
    # own the top likely file.
    likely_files: list[str] = Field(default_factory=list)
    likely_functions: list[str] = Field(default_factory=list)
    fixed_files: list[str] | None = None
    fixed_functions: list[str] | None = None
    path_areas: list[str] = Field(default_factory=list)


def _parse(line: str, where: str) -> RunHeader | IssueResult:
    try:
        data = json.loads(line)
        if data.get("kind") == "run":
            return RunHeader.model_validate(data)
        return IssueResult.model_validate(data)
    except (ValueError, AttributeError, ValidationError) as exc:
        raise UserError(f"not a results line ({str(exc).splitlines()[0]})", where=where) from None


def read_results(path: str | Path) -> tuple[RunHeader, dict[int, IssueResult], int]:
    """The header, the results by issue number, and the byte length of the complete lines.

    A last line without its newline (an interrupted write) is ignored.
    """
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise UserError(f"cannot read results ({exc.strerror})", where=str(p)) from None
    complete = data.rfind(b"\n") + 1
    header: RunHeader | None = None
    results: dict[int, IssueResult] = {}
    for lineno, raw in enumerate(data[:complete].decode("utf-8").splitlines(), start=1):
        if not raw.strip():
            continue
        record = _parse(raw, f"{p}:{lineno}")
        if isinstance(record, RunHeader):
            if header is None:
                header = record
        elif header is None:
            raise UserError("results file without its run header on line 1", where=str(p))
        else:
            results[record.number] = record
    if header is None:
        raise UserError("empty results file (no run header)", where=str(p))
    return header, results, complete


class ResultsWriter:
    """Appends records, one flushed line each; safe to call from several threads."""

    def __init__(self, path: Path, mode: str = "a") -> None:
        self.path = path
        self._fh: IO[str] = open(path, mode, encoding="utf-8")  # noqa: SIM115 - kept open
        self._lock = threading.Lock()

    def write(self, record: RunHeader | IssueResult) -> None:
        line = json.dumps(record.model_dump(mode="json"), ensure_ascii=False, sort_keys=True)
        with self._lock:
            self._fh.write(line + "\n")
            self._fh.flush()

    def close(self) -> None:
        self._fh.close()


def open_results(
    path: Path, header: RunHeader, resume: bool
) -> tuple[ResultsWriter, RunHeader, dict[int, IssueResult]]:
    """A writer for `path`, with the results already there when resuming.

    Without `resume` an existing file is kept as `<name>.bak` and a new one started.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    if resume and path.is_file():
        old, done, complete = read_results(path)
        if not old.same_run(header):
            raise UserError(
                f"cannot resume: the results are from another run ({old.engine} "
                f"{old.model or ''} on {old.repository}, {old.requested} issues"
                f"{', shard ' + old.shard if old.shard else ''})",
                where=str(path),
            )
        with open(path, "r+b") as fh:
            fh.truncate(complete)
        log.info("resuming: %d issues already done in %s", len(done), path)
        return ResultsWriter(path, "a"), old, done
    if path.exists():
        backup = path.with_name(path.name + ".bak")
        os.replace(path, backup)
        log.warning("%s existed; kept as %s (use --resume to continue a run)", path, backup)
    writer = ResultsWriter(path, "w")
    writer.write(header)
    return writer, header, {}


def _merged_shard(headers: list[RunHeader]) -> str | None:
    if any(h.shard is None for h in headers):
        return None
    parts = [tuple(int(x) for x in h.shard.split("/")) for h in headers if h.shard]
    counts = {n for _, n in parts}
    indices = sorted({i for i, _ in parts})
    if len(counts) != 1:
        raise UserError(
            "cannot merge shards of different splits: "
            + ", ".join(sorted({h.shard or "" for h in headers}))
        )
    count = counts.pop()
    if indices == list(range(1, count + 1)):
        return None
    return ",".join(str(i) for i in indices) + f"/{count}"


def merge(paths: list[Path]) -> tuple[RunHeader, list[IssueResult]]:
    """Join shards' results into one run (a later file wins for an issue in two files)."""
    if not paths:
        raise UserError("evaluate merge: give the results files (.jsonl) of the shards")
    headers: list[RunHeader] = []
    results: dict[int, IssueResult] = {}
    for p in paths:
        header, records, _ = read_results(p)
        first = headers[0] if headers else header
        for key in ("repository", "engine", "model", "requested"):
            if getattr(header, key) != getattr(first, key):
                raise UserError(
                    f"not the same run as {paths[0]}: {key} is {getattr(header, key)!r}, "
                    f"not {getattr(first, key)!r}",
                    where=str(p),
                )
        headers.append(header)
        results.update(records)
    by_shard = {h.shard: h for h in headers}
    if None in by_shard:
        selected = by_shard[None].selected
    else:
        selected = sum(h.selected for h in by_shard.values())
    merged = headers[0].model_copy(
        update={
            "day": min(h.day for h in headers),
            "selected": selected,
            "window": max(h.window for h in headers),
            "examined": max(h.examined for h in headers),
            "shard": _merged_shard(list(by_shard.values())),
        }
    )
    return merged, ordered(results.values())


def ordered(results: Iterable[IssueResult]) -> list[IssueResult]:
    """Newest first, as the selection is."""
    return sorted(results, key=lambda r: (r.created_at, r.number), reverse=True)
