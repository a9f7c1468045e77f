"""The backlog run's Markdown (the `--dry-run` report, the job summary) and its JSON outputs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from issue_assistant.atomic import write_atomic
from issue_assistant.backlog.run import BacklogRun
from issue_assistant.render import render

SKIPPED_ROWS = 200  # rows of the "not proposed" table that list the selection's skips
# GitHub takes at most 1 MiB of job summary per step; a longer report is cut with a pointer.
SUMMARY_MAX = 1_000_000


def server_url(api_url: str) -> str:
    """The web address of the GitHub that `api_url` serves (api.github.com, or Enterprise's
    `HOST/api/v3`)."""
    api = api_url.rstrip("/")
    if api == "https://api.github.com":
        return "https://github.com"
    return api.removesuffix("/api/v3")


def issue_link(base: str, repository: str, number: int) -> str:
    return f"{base}/{repository}/issues/{number}"


def render_run(run: BacklogRun, api_url: str = "https://api.github.com") -> str:
    base = server_url(api_url)
    proposed = run.proposed
    shown = [i.number for i in run.items] + [s.number for s in run.skipped[:SKIPPED_ROWS]]
    return render(
        "backlog.md.j2",
        run=run,
        proposed=proposed,
        looked=[i for i in run.items if not i.proposed],
        # values, not calls: the template calls nothing back in the plan or the run
        labels_of={i.number: i.plan.labels() for i in proposed if i.plan is not None},
        words_of={i.number: i.plan.words() for i in proposed if i.plan is not None},
        links={n: issue_link(base, run.repository, n) for n in shown},
        skipped_rows=SKIPPED_ROWS,
    )


def summary_text(text: str, report: Path | None) -> str:
    """`text` for the job summary: whole when it fits, else cut with where the rest is."""
    if len(text) <= SUMMARY_MAX:
        return text
    where = f" The whole report: {report.name}." if report is not None else ""
    return text[:SUMMARY_MAX].rsplit("\n", 1)[0] + f"\n\n… cut at GitHub's summary size.{where}\n"


def write_report(path: Path, text: str) -> Path:
    return write_atomic(path, text)


def outputs(run: BacklogRun) -> dict[str, Any]:
    """The run as plain JSON: what was proposed, skipped or failed, and why it stopped."""
    return {
        "repository": run.repository,
        "writes": run.writes,
        "selected": run.selected,
        "proposed": [i.number for i in run.proposed],
        "items": [
            {
                "issue": i.number,
                "action": i.action,
                "rule": i.rule or None,
                "reason": i.reason,
                "labels": i.plan.labels() if i.plan else [],
                "confidence_words": i.plan.words() if i.plan else {},
                "duplicate": i.plan.duplicate.number if i.plan and i.plan.duplicate else None,
                "comment_url": i.comment_url,
            }
            for i in run.items
        ],
        "skipped": [{"issue": s.number, "rule": s.rule, "reason": s.reason} for s in run.skipped],
        "stopped": run.stopped,
        "left": run.left,
    }
