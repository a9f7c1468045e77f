"""Arguments and loading steps that several commands share."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from issue_assistant.config import Config, LabelsConfig, find_file, load_both, load_config
from issue_assistant.errors import UserError
from issue_assistant.index import IssueIndex
from issue_assistant.index.embeddings import load_embedder
from issue_assistant.pipeline import index_path, open_index
from issue_assistant.tracker.snapshot import (
    IndexedSnapshot,
    Snapshot,
    file_stamp,
    read_repository,
    read_snapshot,
)


def add_config_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--labels", metavar="FILE", help="labels.toml (default: ./labels.toml, then .github/)"
    )
    parser.add_argument(
        "--config", metavar="FILE", help="config.toml (default: ./config.toml, then .github/)"
    )


def add_snapshot_argument(parser: argparse.ArgumentParser, required: bool = True) -> None:
    parser.add_argument(
        "--snapshot",
        metavar="FILE",
        required=required,
        help="a snapshot file (.jsonl or .jsonl.gz) to work from, offline",
    )
    parser.add_argument(
        "--cache-dir",
        metavar="DIR",
        help="where the index is kept (default: [index] cache_dir of config.toml)",
    )


def add_checkout_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--checkout",
        metavar="DIR",
        help="the repository's checkout to find likely files in (default: [code] checkout); "
        "'' for none",
    )


def with_checkout(args: argparse.Namespace, config: Config) -> Config:
    """`config` with `--checkout` as `[code] checkout` when it was given."""
    checkout = getattr(args, "checkout", None)
    if checkout is None:
        return config
    return config.model_copy(update={"code": config.code.model_copy(update={"checkout": checkout})})


def load_configs(args: argparse.Namespace) -> tuple[LabelsConfig, Config]:
    labels, config = load_both(args.labels, args.config)
    return labels, with_checkout(args, config)


def load_config_only(args: argparse.Namespace) -> Config:
    return load_config(find_file("config.toml", getattr(args, "config", None)))


def snapshot_and_index(
    args: argparse.Namespace, config: Config
) -> tuple[Snapshot | IndexedSnapshot, IssueIndex]:
    """The snapshot and its index, brought up to date; when the index was last updated from
    this very file (same size and mtime) the snapshot is not parsed at all (a warm run)."""
    cache = args.cache_dir or os.environ.get("ISSUE_ASSISTANT_CACHE") or config.index.cache_dir
    path = Path(args.snapshot)
    repository = read_repository(path)
    stamp = file_stamp(path)
    index = IssueIndex(index_path(Path(cache), repository.full_name))
    if index.source == stamp and index.repository is not None:
        if config.index.embeddings:
            index.enable_embeddings(lambda: load_embedder(True))
        return IndexedSnapshot(index.repository, index, path), index
    snapshot = read_snapshot(path)
    index = open_index(snapshot, Path(cache), embeddings=config.index.embeddings)
    index.mark_source(stamp, snapshot.repository)
    return snapshot, index


def issue_number(value: str) -> int:
    try:
        n = int(value.lstrip("#"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an issue number: {value!r}") from None
    if n <= 0:
        raise argparse.ArgumentTypeError(f"not an issue number: {value!r}")
    return n


def get_issue(snapshot: Snapshot | IndexedSnapshot, number: int):  # noqa: ANN201
    try:
        return snapshot.get_issue(number)
    except KeyError:
        raise UserError(f"no issue #{number} in the snapshot", where=str(snapshot.path)) from None
