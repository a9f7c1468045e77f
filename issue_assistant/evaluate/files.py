"""File-level accuracy of the likely files, against the files the fixing pull request changed.

Scored only on issues whose fixing pull request is known with its files (`fixed_by` in the
snapshot, saved by `snapshot --fixed-by`), and only when a checkout was indexed. Acc@k: the share
of those issues where one of the top k likely files is among the changed files (the measure of
the SWE-bench Lite localisation papers, where BM25 over files reaches about 0.62 at 5).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from issue_assistant.config import LabelsConfig
from issue_assistant.evaluate.metrics import Ratio
from issue_assistant.evaluate.results import IssueResult
from issue_assistant.tracker.models import Issue


@dataclass(frozen=True)
class FileMeasures:
    at1: Ratio
    at5: Ratio
    fixed: int  # issues with a known fixing PR and its files
    indexed: int  # of those, issues the likely files were computed for
    path_area_precision: Ratio
    path_area_recall: Ratio

    @property
    def scored(self) -> bool:
        return self.indexed > 0


def fixed_files(issue: Issue) -> list[str] | None:
    """The files changed by the pull requests that fixed `issue` (None when unknown)."""
    if not issue.fixed_by:
        return None
    files: list[str] = []
    for pr in issue.fixed_by:
        files += [f for f in pr.files if f not in files]
    return files or None


def path_areas(labels: LabelsConfig, files: Sequence[str], top: int = 1) -> list[str]:
    """Areas whose `paths` own one of the `top` likely files."""
    return [a.name for a in labels.area if a.paths and any(a.owns(f) for f in files[:top])]


def file_measures(results: Sequence[IssueResult]) -> FileMeasures:
    fixed = [r for r in results if r.fixed_files]
    indexed = [r for r in fixed if r.likely_files]
    hit1 = sum(1 for r in indexed if set(r.likely_files[:1]) & set(r.fixed_files or []))
    hit5 = sum(1 for r in indexed if set(r.likely_files[:5]) & set(r.fixed_files or []))
    right = proposed = wanted = 0
    for r in results:
        gold = set(r.gold.group("area"))
        if not gold or not r.likely_files:
            continue
        mine = set(r.path_areas)
        right += len(mine & gold)
        proposed += len(mine)
        wanted += len(gold)
    return FileMeasures(
        at1=Ratio(hit1, len(indexed)),
        at5=Ratio(hit5, len(indexed)),
        fixed=len(fixed),
        indexed=len(indexed),
        path_area_precision=Ratio(right, proposed),
        path_area_recall=Ratio(right, wanted),
    )
