"""`evaluate --backlog`: the backlog case measured and written beside the evaluate report."""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from issue_assistant.config.labels import LabelsConfig
    from issue_assistant.config.sections import Config
    from issue_assistant.tracker.base import Tracker

log = logging.getLogger(__name__)


def report_path(report: Path) -> Path:
    """`OWNER-REPO-backlog-accuracy.md` beside where the evaluate report goes."""
    return report.with_name(report.name.replace("-accuracy", "-backlog-accuracy"))


def backlog_evaluation(
    args: argparse.Namespace,
    tracker: Tracker,
    labels: LabelsConfig,
    config: Config,
    report: Path,
    engine: str | None,
) -> int:
    from issue_assistant.atomic import write_atomic
    from issue_assistant.commands.common import cache_dir, unused_report
    from issue_assistant.evaluate.backlog import evaluate_backlog
    from issue_assistant.index.local import open_index
    from issue_assistant.render import render

    index = open_index(tracker, cache_dir(args, config), vectors=config.index.vectors)
    limit = args.limit  # --limit: the first N cases
    evaluation = evaluate_backlog(tracker, index, labels, config, engine_name=engine, limit=limit)
    out = unused_report(report_path(report), chosen=bool(args.report), force=args.force)
    rows = list(zip(evaluation.at_label, evaluation.at_opening, strict=True))
    text = render("evaluate_backlog.md.j2", ev=evaluation, scored=evaluation.scored(), rows=rows)
    write_atomic(out, text)
    if args.json:
        summary = {
            "report": str(out),
            "cases": len(evaluation.at_label),
            "examined": evaluation.cases.examined,
            "events_unknown": evaluation.cases.events_unknown,
            "measures": {
                s.label: {
                    g.group: {
                        "issues": g.issues,
                        "precision": str(g.precision),
                        "recall": str(g.recall),
                    }
                    for g in s.groups
                }
                for s in evaluation.scored()
            },
        }
        print(json.dumps(summary, indent=2, sort_keys=True))
    else:
        print(out)
    return 0
