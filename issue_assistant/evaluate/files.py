"""File-level accuracy of the likely files, against the files the fixing pull request changed.

Scored only on issues whose fixing pull request is known with its files (`fixed_by` in the
snapshot, saved by `snapshot --fixed-by`, or joined from a clone's history: `evaluate.fixes`), and
only when a checkout was indexed. Acc@k: the share of those issues where one of the top k likely
files is among the changed files (the measure of the SWE-bench Lite localisation papers, where
BM25 over files reaches about 0.62 at 5); MRR the mean of 1/rank of the first right one.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from issue_assistant.config.labels import LabelsConfig
from issue_assistant.evaluate.metrics import Ratio
from issue_assistant.evaluate.results import IssueResult
from issue_assistant.likely.checkout import file_kind
from issue_assistant.tracker.models import Issue


def first_hit(predicted: Sequence[str], truth: Collection[str]) -> int | None:
    """The 1-based rank of the first predicted item in `truth` (None: none is)."""
    for rank, item in enumerate(predicted, start=1):
        if item in truth:
            return rank
    return None


@dataclass(frozen=True)
class RankScores:
    """Accuracy at 1, 5 and 10 (a right item among the top k) and mean reciprocal rank."""

    at1: Ratio
    at5: Ratio
    at10: Ratio
    mrr: float | None
    issues: int

    def row(self) -> list[str]:
        mrr = f"{self.mrr:.3f}" if self.mrr is not None else "–"
        return [str(self.at1), str(self.at5), str(self.at10), mrr]


def rank_scores(rows: Iterable[tuple[Sequence[str], Collection[str]]]) -> RankScores:
    """Scores over (predicted best first, truth) pairs; a pair with an empty truth is skipped."""
    ranks: list[int | None] = [first_hit(p, t) for p, t in rows if t]
    n = len(ranks)

    def at(k: int) -> Ratio:
        return Ratio(sum(1 for r in ranks if r is not None and r <= k), n)

    mrr = sum(1 / r for r in ranks if r is not None) / n if n else None
    return RankScores(at(1), at(5), at(10), mrr, n)


@dataclass(frozen=True)
class FileMeasures:
    fixed: int  # issues with a known fixing PR and its files
    indexed: int  # of those, issues the likely files were computed for
    source: RankScores  # the likely files against the fix's source files (tests, docs left out)
    everything: RankScores  # against every file the fix changed (tests and docs too)
    functions: RankScores  # function-level: the functions the fix touched in source files
    engine: RankScores  # the engine's own proposed files (LLM engines), against source files
    engine_proposed: int  # issues where the engine proposed files
    path_area_precision: Ratio
    path_area_recall: Ratio

    @property
    def scored(self) -> bool:
        return self.indexed > 0

    @property
    def at1(self) -> Ratio:
        return self.source.at1

    @property
    def at5(self) -> Ratio:
        return self.source.at5


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


def _source(files: Iterable[str]) -> list[str]:
    return [f for f in files if file_kind(f) == "source"]


def _source_functions(names: Iterable[str]) -> list[str]:
    return [n for n in names if file_kind(n.split("::", 1)[0]) == "source"]


def file_measures(results: Sequence[IssueResult]) -> FileMeasures:
    fixed = [r for r in results if r.fixed_files]
    indexed = [r for r in fixed if r.likely_files]
    proposed = [r for r in fixed if r.decision.files]
    right = shown = wanted = 0
    for r in results:
        gold = set(r.gold.group("area"))
        if not gold or not r.likely_files:
            continue
        mine = set(r.path_areas)
        right += len(mine & gold)
        shown += len(mine)
        wanted += len(gold)
    return FileMeasures(
        fixed=len(fixed),
        indexed=len(indexed),
        source=rank_scores((r.likely_files, _source(r.fixed_files or [])) for r in indexed),
        everything=rank_scores((r.likely_files, r.fixed_files or []) for r in indexed),
        functions=rank_scores(
            (r.likely_functions, _source_functions(r.fixed_functions or [])) for r in indexed
        ),
        engine=rank_scores((r.decision.files, _source(r.fixed_files or [])) for r in proposed),
        engine_proposed=len(proposed),
        path_area_precision=Ratio(right, shown),
        path_area_recall=Ratio(right, wanted),
    )
