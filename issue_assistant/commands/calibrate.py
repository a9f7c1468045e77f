"""`calibrate`: fit the label model, its thresholds and the duplicate threshold on the history."""

from __future__ import annotations

import argparse
import json
import time
from datetime import UTC, datetime

from issue_assistant.commands.args import (
    add_config_arguments,
    add_json_argument,
    add_limit_argument,
    add_repository_argument,
    limit_of,
)
from issue_assistant.errors import NO_SOURCE, UserError

HELP = (
    "Fit the label model and measure, out of fold on the repository's history, how often its "
    "proposals are right at each confidence (the tiers: [labels] min_precision and "
    "target_precision), and the duplicate threshold for [duplicates] target_precision; writes "
    "calibration.json beside the index and prints the thresholds, tier bounds and tables."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--snapshot", metavar="FILE", help="work offline from a snapshot")
    add_repository_argument(
        parser, positional=False, help="the repository on GitHub (default: $GH_REPO)"
    )
    add_limit_argument(
        parser, 200, "live: how many closed issues to read histories of (default 200)"
    )
    parser.add_argument(
        "--cache-dir",
        metavar="DIR",
        help="where the index is kept (default: [index] cache_dir of config.toml)",
    )
    add_config_arguments(parser)
    add_json_argument(parser, "calibration.json's content, its path and the source")


def run(args: argparse.Namespace) -> int:
    from issue_assistant.commands.common import cache_dir, load_configs
    from issue_assistant.commands.evaluate import _tracker
    from issue_assistant.index.local import open_index
    from issue_assistant.learn.calibration_file import (
        CalibrationFile,
        duplicate_calibration,
        label_calibration,
        write_calibration,
    )
    from issue_assistant.learn.duplicate_model import MIN_CALIBRATION_PAIRS, MIN_POSITIVES, Replayed
    from issue_assistant.learn.learned import Beside
    from issue_assistant.learn.store import refit
    from issue_assistant.learn.tiers import (
        MEASURE_MIN,
        MIN_LABEL_EVIDENCE,
        TierRule,
        proposed_record,
    )
    from issue_assistant.moment import open_moment
    from issue_assistant.pipeline import replay_pairs
    from issue_assistant.render import render
    from issue_assistant.settings import current
    from issue_assistant.tracker.asof import AsOfView
    from issue_assistant.tracker.duplicates import refiled
    from issue_assistant.tracker.models import Issue

    labels, config = load_configs(args)
    args.limit = limit_of(args)
    if not args.snapshot and not (args.repo or current().repository):
        raise UserError(NO_SOURCE)
    tracker, source, _ = _tracker(args, labels, config)
    start = time.perf_counter()
    index = open_index(tracker, cache_dir(args, config), vectors=config.index.vectors)
    moment = tracker.repository.fetched_at if args.snapshot else datetime.now(UTC)
    view = AsOfView(tracker, moment)
    model, _ = refit(view, index, labels, moment, force=True, replay=True)
    target = config.labels.target_precision
    base = open_moment(tracker, index, labels, config, Beside())

    again = refiled(tracker.all_issues())

    def replay(issue: Issue) -> Replayed:
        return replay_pairs(base, issue, config=config, again=again)

    dup = duplicate_calibration(tracker, index, labels, config, moment, replay=replay, again=again)
    calibration = CalibrationFile(
        repository=tracker.repository.full_name,
        cutoff=model.cutoff,
        fingerprint=model.fingerprint,
        labelled_issues=model.issues,
        target_precision=target,
        min_precision=config.labels.min_precision,
        propose=config.labels.propose,
        labels=label_calibration(model, TierRule.of(config.labels)),
        duplicates=dup,
    )
    path = write_calibration(calibration, index.path)
    seconds = time.perf_counter() - start
    if args.json:
        out = {"path": str(path), "source": source, "seconds": round(seconds, 3)}
        print(json.dumps({**calibration.model_dump(mode="json"), **out}, sort_keys=True))
        return 0
    print(
        render(
            "calibrate.txt.j2",
            cal=calibration,
            rule=TierRule.of(config.labels),
            measure_min=MEASURE_MIN,
            min_evidence=MIN_LABEL_EVIDENCE,
            record=proposed_record,
            min_positives=MIN_POSITIVES,
            min_pairs=MIN_CALIBRATION_PAIRS,
            source=source,
            path=path,
            seconds=seconds,
        ),
        end="",
    )
    return 0
