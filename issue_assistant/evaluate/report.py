"""Where the report goes (beside the checkout, never inside it) and its rendering."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from issue_assistant.atomic import write_atomic
from issue_assistant.config.labels import GROUPS
from issue_assistant.errors import UserError
from issue_assistant.evaluate.engine_stats import engine_stats
from issue_assistant.evaluate.files import file_measures
from issue_assistant.evaluate.labels import calibrations, group_labels
from issue_assistant.evaluate.metrics import Measures, Ratio, issue_line, measure
from issue_assistant.evaluate.results import IssueResult, RunHeader, ordered
from issue_assistant.render import render
from issue_assistant.tracker.duplicates import REFILE_MINUTES

SMALL = 20


def checkout_root(start: Path | None = None) -> Path:
    """The repository root above `start` (the current directory), or `start` itself."""
    here = (start or Path.cwd()).resolve()
    for d in (here, *here.parents):
        if (d / ".git").exists():
            return d
    return here


def default_report_path(folder: Path, full_name: str, shard: str | None = None) -> Path:
    """`OWNER-REPO-accuracy.md` in `folder` (a shard's has its suffix)."""
    name = full_name.replace("/", "-")
    suffix = "-shard-" + shard.replace("/", "-of-") if shard else ""
    return folder / f"{name}-accuracy{suffix}.md"


def ensure_outside(path: Path, root: Path) -> Path:
    """`path`, resolved; a UserError when it is inside the checkout (the engine would read it)."""
    resolved = path.resolve()
    if resolved == root or resolved.is_relative_to(root):
        raise UserError(
            f"the report must be outside the checkout {root}, where the engine would read it",
            where=str(path),
        )
    return resolved


def results_path(report: Path) -> Path:
    """The JSONL beside the report: same name, `.jsonl`."""
    return report.with_suffix(".jsonl")


def _chart(m: Measures) -> dict[str, list]:
    names: list[str] = []
    values: list[float] = []
    for g in m.groups:
        for what, ratio in (("precision", g.precision), ("recall", g.recall)):
            if ratio.share is not None:
                names.append(f"{g.group} {what}")
                values.append(round(ratio.share, 2))
    return {"names": names, "shares": values}


def _small(m: Measures) -> list[str]:
    named: list[tuple[str, Ratio]] = [("type accuracy", m.type_accuracy)]
    for g in m.groups:
        named += [(f"{g.group} precision", g.precision), (f"{g.group} recall", g.recall)]
    named += [
        ("duplicate recall", m.dup_recall),
        ("duplicate precision", m.dup_precision),
        ("false-duplicate rate", m.false_dup_rate),
        ("sure-duplicate recall", m.sure_recall),
        ("sure-duplicate precision", m.sure_precision),
        ("retrieval ceiling", m.retrieval_ceiling),
        ("question precision", m.question_precision),
        ("question recall", m.question_recall),
    ]
    return [name for name, r in named if 0 < r.den < SMALL]


def _model(header: RunHeader, results: Sequence[IssueResult]) -> str:
    if header.model:
        return header.model
    models = sorted({r.decision.model for r in results if r.decision.model})
    return ", ".join(models)


def render_report(header: RunHeader, results: Sequence[IssueResult]) -> str:
    """The Markdown report for a run (deterministic for the same header and results)."""
    rows = ordered(results)
    m = measure(rows)
    return render(
        "report.md.j2",
        header=header,
        model=_model(header, rows),
        m=m,
        lines=[issue_line(r) for r in rows],
        chart=_chart(m),
        small=_small(m),
        small_limit=SMALL,
        fallback_used=sum(1 for r in rows if r.error and r.answered),
        label_groups=[group_labels(rows, g) for g in GROUPS],
        calibrations=calibrations(rows),
        e=engine_stats(rows),
        repo_url=f"https://github.com/{header.repository}",
        files=file_measures(rows),
        refile_minutes=REFILE_MINUTES,
    )


def write_report(path: Path, header: RunHeader, results: Sequence[IssueResult]) -> Path:
    """Render and write atomically (a temporary file renamed into place)."""
    return write_atomic(path, render_report(header, results))
