"""`index`: build or update the on-disk search index of a snapshot."""

from __future__ import annotations

import argparse
import time

from issue_assistant.commands.common import (
    add_snapshot_argument,
    load_config_only,
    snapshot_and_index,
)

HELP = "Build or update the search index of a snapshot (only new or changed issues are written)."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_snapshot_argument(parser)
    parser.add_argument("--config", metavar="FILE", help="config.toml")


def run(args: argparse.Namespace) -> int:
    config = load_config_only(args)
    start = time.perf_counter()
    snapshot, index = snapshot_and_index(args, config)
    print(
        f"{snapshot.repository.full_name}: {len(index)} issues and pull requests indexed "
        f"at {index.path} ({time.perf_counter() - start:.2f} s)"
    )
    return 0
