"""`index`: build or update the on-disk search index of a snapshot."""

from __future__ import annotations

import argparse
import json
import time

from issue_assistant.commands.args import add_json_argument, add_snapshot_argument

HELP = "Build or update the search index of a snapshot (only new or changed issues are written)."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_snapshot_argument(parser)
    parser.add_argument("--config", metavar="FILE", help="config.toml")
    parser.add_argument(
        "--labels",
        metavar="FILE",
        help="labels.toml: with it (or ./labels.toml) the label model is refit when due",
    )
    add_json_argument(parser, "what was indexed and the label model's state")


def run(args: argparse.Namespace) -> int:
    from issue_assistant.commands.common import load_config_only, snapshot_and_index
    from issue_assistant.config.files import find_file
    from issue_assistant.config.labels import load_labels
    from issue_assistant.learn.store import refit
    from issue_assistant.tracker.asof import AsOfView

    config = load_config_only(args)
    start = time.perf_counter()
    snapshot, index = snapshot_and_index(args, config)
    seconds = time.perf_counter() - start
    result: dict = {
        "repository": snapshot.repository.full_name,
        "indexed": len(index),
        "path": str(index.path),
        "seconds": round(seconds, 3),
        "label_model": None,
    }
    if not args.json:
        print(
            f"{snapshot.repository.full_name}: {len(index)} issues and pull requests indexed "
            f"at {index.path} ({seconds:.2f} s)"
        )
    labels_file = find_file("labels.toml", args.labels)
    if labels_file is not None and config.labels.model == "learned":
        moment = snapshot.repository.fetched_at
        model, refit_now = refit(
            AsOfView(snapshot, moment), index, load_labels(labels_file), moment, replay=True
        )
        result["label_model"] = {
            "refit": refit_now,
            "labelled_issues": model.issues,
            "cutoff": model.cutoff.isoformat(),
            "fingerprint": model.fingerprint,
        }
        if not args.json:
            state = "refit" if refit_now else "up to date"
            print(f"label model {state}: {model.describe()}")
    if args.json:
        print(json.dumps(result, sort_keys=True))
    return 0
