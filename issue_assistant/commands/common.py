"""Loading steps that several commands share (heavy modules imported when called)."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from issue_assistant.errors import UserError

if TYPE_CHECKING:
    from issue_assistant.config.labels import LabelsConfig
    from issue_assistant.config.sections import Config, VectorKind
    from issue_assistant.index import IssueIndex
    from issue_assistant.tracker.github_tracker import GitHubTracker
    from issue_assistant.tracker.models import Repository
    from issue_assistant.tracker.snapshot import IndexedSnapshot, Snapshot


def config_paths(args: argparse.Namespace) -> tuple[str | None, str | None]:
    """--labels and --config, else $ISSUE_ASSISTANT_LABELS / $ISSUE_ASSISTANT_CONFIG (or the
    inputs), else None (the default search)."""
    from issue_assistant.settings import current

    s = current()
    return getattr(args, "labels", None) or s.labels, getattr(args, "config", None) or s.config


def load_configs(args: argparse.Namespace, root: Path | None = None) -> tuple[LabelsConfig, Config]:
    """Both files, with the model from --model, else $ISSUE_ASSISTANT_MODEL, else the config."""
    from issue_assistant.config.files import load_both

    labels, config = load_both(*config_paths(args), root)
    return labels, with_checkout(args, with_model(config, getattr(args, "model", None)))


def warn_after_fetch(as_of: datetime | None, repository: Repository) -> None:
    """Warn when --as-of is later than the snapshot knows: its issues are as they were when it
    was fetched, not at that moment."""
    if as_of is None or as_of <= repository.fetched_at:
        return
    import logging

    def day(moment: datetime) -> str:
        return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")

    logging.getLogger(__name__).warning(
        "--as-of %s is after the snapshot was fetched (%s): its issues are as they were then",
        day(as_of),
        day(repository.fetched_at),
    )


def with_checkout(args: argparse.Namespace, config: Config) -> Config:
    """`config` with `--checkout` as `[code] checkout` when it was given."""
    checkout = getattr(args, "checkout", None)
    if checkout is None:
        return config
    return config.model_copy(update={"code": config.code.model_copy(update={"checkout": checkout})})


def load_config_only(args: argparse.Namespace) -> Config:
    from issue_assistant.config.files import find_file
    from issue_assistant.config.sections import load_config

    return with_model(load_config(find_file("config.toml", config_paths(args)[1])), None)


def with_model(config: Config, flag: str | None) -> Config:
    from issue_assistant.settings import current

    model = flag or current().model
    if not model:
        return config
    return config.model_copy(update={"engine": config.engine.model_copy(update={"model": model})})


def engine_name(args: argparse.Namespace) -> str | None:
    """--engine, else $ISSUE_ASSISTANT_ENGINE (or the input), else None ([engine] name)."""
    from issue_assistant.settings import current

    return getattr(args, "engine", None) or current().engine


def cache_dir(args: argparse.Namespace, config: Config) -> Path:
    from issue_assistant.settings import current

    return current().cache_root(config.index.cache_dir, getattr(args, "cache_dir", None))


def snapshot_and_index(
    args: argparse.Namespace, config: Config, *, vectors: bool = True
) -> tuple[Snapshot | IndexedSnapshot, IssueIndex]:
    """The snapshot and its index, brought up to date; when the index was last updated from
    this very file (same size and mtime) the snapshot is not parsed at all (a warm run), and
    after a change only the issue lines that changed are parsed (`read_changed`). `vectors`:
    with the vectors `[index]` asks for (False: BM25 alone, as a text search needs)."""
    from issue_assistant.cachelock import holding
    from issue_assistant.index.local import index_path
    from issue_assistant.tracker.snapshot import read_repository

    cache = cache_dir(args, config)
    path = Path(args.snapshot)
    repository = read_repository(path)
    with holding(index_path(cache, repository.full_name)):  # one writer per cache
        return _up_to_date(path, repository, cache, config.index.vectors if vectors else "off")


def _up_to_date(
    path: Path, repository: Repository, cache: Path, vectors: VectorKind
) -> tuple[Snapshot | IndexedSnapshot, IssueIndex]:
    import logging

    from issue_assistant.index import IssueIndex
    from issue_assistant.index.local import index_path, open_index
    from issue_assistant.tracker.snapshot import Extras, IndexedSnapshot, file_stamp, read_changed

    stamp = file_stamp(path)
    index = IssueIndex(index_path(cache, repository.full_name))
    extras = Extras.load(index.path, stamp)
    if index.source == stamp and index.repository is not None and extras is not None:
        index.enable_vectors(vectors)
        if index.vectors is not None:  # (a text search has none: it imports no progress display)
            from issue_assistant.progress import callback

            index.embed_changed([], progress=callback("vectors"))
        return IndexedSnapshot(index.repository, index, path, extras), index
    known = index.source_lines() if len(index) else {}
    scan = read_changed(path, known)
    read = scan.snapshot(path)  # whole when nothing was known, else the changed issues only
    extras = Extras(stamp=stamp, releases=read.releases(), discussions=read.discussions())
    new_lines = iter(h for h in scan.lines if h not in known)  # one per parsed issue, in order
    lines = {**known, **{next(new_lines): issue.number for issue in scan.issues}}
    lines = {h: lines[h] for h in scan.lines}
    if not known:
        index = open_index(read, cache, vectors=vectors)
        extras.save(index.path)  # before the source: a warm run never finds one without the other
        index.mark_source(stamp, read.repository, lines)
        return read, index
    index.enable_vectors(vectors)
    from issue_assistant.progress import callback, counted

    written = index.update(counted(scan.issues, "index", total=len(scan.issues)))
    # Issues whose line left the snapshot and came back under no other line: gone from it.
    index.remove(set(known.values()) - set(lines.values()))
    index.embed_changed(scan.issues, progress=callback("vectors"))
    extras.save(index.path)
    index.mark_source(stamp, scan.repository, lines)
    logging.getLogger("issue_assistant.pipeline").info(
        "index: %d issues added or changed (%d in all; %d snapshot lines unchanged, not parsed)",
        written,
        len(index),
        scan.unchanged,
    )
    return IndexedSnapshot(scan.repository, index, path, extras), index


def cli_writes(apply: bool, config: Config) -> str:
    """The CLI's writes mode: `--apply` asks for live, else dry-run; `[approval] writes` (or
    $ISSUE_ASSISTANT_WRITES) can only lower it (`off` < `dry-run` < `live`)."""
    from issue_assistant.settings import current

    order = ["off", "dry-run", "live"]
    wanted = "live" if apply else "dry-run"
    ceiling = (current().writes or config.approval.writes or "live").lower()
    if ceiling not in order:
        raise UserError(f"writes must be one of {', '.join(order)}, not {ceiling!r}")
    mode = min(wanted, ceiling, key=order.index)
    if apply and mode != "live":
        # Never silent: the one line that says --apply was held back, and by which setting.
        setting = (
            f"ISSUE_ASSISTANT_WRITES={current().writes}"
            if current().writes
            else f'[approval] writes = "{config.approval.writes}" in config.toml'
        )
        print(
            f"issue-assistant: warning: --apply: nothing will be written, {setting} "
            f"({mode}); remove it or make it live to write",
            file=sys.stderr,
        )
    return mode


def unused_report(path: Path, *, chosen: bool, force: bool, beside: tuple[str, ...] = ()) -> Path:
    """Never overwrite a report silently: `path` when it is free (with the files `beside` it:
    the same name with those suffixes), or with --force; a path given by --report that exists
    is an error; the default name moves to the next free one (`-2`, `-3`, ...), said on stderr."""

    def taken(p: Path) -> bool:
        return any(q.exists() for q in (p, *(p.with_suffix(s) for s in beside)))

    if force or not taken(path):
        return path
    if chosen:
        raise UserError("the report exists: --force overwrites it", where=str(path))
    n = 2
    while taken(other := path.with_name(f"{path.stem}-{n}{path.suffix}")):
        n += 1
    print(f"issue-assistant: {path} exists: writing {other} (--force overwrites)", file=sys.stderr)
    return other


def get_issue(snapshot: Snapshot | IndexedSnapshot, number: int):  # noqa: ANN201
    try:
        return snapshot.get_issue(number)
    except KeyError:
        raise UserError(f"no issue #{number} in the snapshot", where=str(snapshot.path)) from None


def github_reader(repo: str | None) -> GitHubTracker:
    """GitHub, read-only, for `-R OWNER/REPO` (else the environment's repository), with a token
    when one is set: a public repository is read without."""
    from issue_assistant.settings import current

    settings = current()
    full_name = settings.require_repository(repo)
    try:
        from issue_assistant.tracker.github_tracker import GitHubTracker
    except ImportError:
        raise UserError("reading GitHub is not available in this version; use --snapshot") from None
    return GitHubTracker(full_name, settings.github_token or "", settings.api_url)
