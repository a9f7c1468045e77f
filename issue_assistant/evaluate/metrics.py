"""The measures, computed from per-issue results alone (so a report can be re-rendered)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from issue_assistant.config.labels import GROUPS
from issue_assistant.evaluate.results import IssueResult


@dataclass(frozen=True)
class Ratio:
    """A share with the counts behind it: str() is '0.62 (31/50)', or '– (0/0)'."""

    num: int
    den: int

    @property
    def share(self) -> float | None:
        return self.num / self.den if self.den else None

    def __str__(self) -> str:
        share = self.share
        return f"{share:.2f} ({self.num}/{self.den})" if share is not None else f"– (0/{self.den})"


@dataclass(frozen=True)
class GroupMeasure:
    group: str
    issues: int
    precision: Ratio
    recall: Ratio


@dataclass(frozen=True)
class Cost:
    latency_p50: float | None
    latency_p95: float | None
    latency_total: float
    tokens_in: int
    tokens_out: int
    cost_usd: float | None
    tool_calls: int
    turns: int
    forced_submits: int
    dropped: int
    failures: int
    unanswered: int


@dataclass(frozen=True)
class Measures:
    issues: int
    groups: list[GroupMeasure]
    type_accuracy: Ratio
    dup_recall: Ratio
    dup_precision: Ratio
    false_dup_rate: Ratio
    sure_recall: Ratio
    sure_precision: Ratio
    retrieval_ceiling: Ratio
    originals_missing: int
    refiled: int
    recall_at: dict[int, Ratio]
    unknown_originals: int
    unknown_flagged: int
    question_precision: Ratio
    question_recall: Ratio
    questions_unknown: int
    questions_not_scored: int
    events_unknown: int
    cost: Cost


@dataclass
class IssueLine:
    """One issue's outcome, for the report's per-issue list."""

    number: int
    title: str
    right: list[str] = field(default_factory=list)
    wrong: list[str] = field(default_factory=list)
    missed: list[str] = field(default_factory=list)
    unscored: list[str] = field(default_factory=list)
    duplicate: str = ""
    question: str = ""
    error: str | None = None


def engine_labels(result: IssueResult, group: str) -> list[str]:
    """The engine's labels of `group` minus those present at the moment (counted for neither)."""
    present = set(result.gold.present)
    return [n for n in result.decision.group_labels(group) if n not in present]


def label_measure(results: Sequence[IssueResult], group: str) -> GroupMeasure:
    """Precision and recall of `group` over the issues people gave a label of it after opening."""
    rows = [r for r in results if r.gold.group(group)]
    hits = proposed = given = 0
    for r in rows:
        mine, theirs = set(engine_labels(r, group)), set(r.gold.group(group))
        hits += len(mine & theirs)
        proposed += len(mine)
        given += len(theirs)
    return GroupMeasure(group, len(rows), Ratio(hits, proposed), Ratio(hits, given))


def type_accuracy(results: Sequence[IssueResult]) -> Ratio:
    """Over issues with exactly one type label, given by people after opening."""
    rows = [r for r in results if r.gold.type_gold]
    return Ratio(sum(1 for r in rows if r.decision.type == r.gold.type_gold), len(rows))


def _proposed(result: IssueResult) -> int | None:
    dup = result.decision.duplicate
    return dup.number if dup is not None else None


def duplicate_right(result: IssueResult) -> bool:
    n = _proposed(result)
    return n is not None and result.gold.duplicate_of is not None and n in result.gold.accept


def duplicate_measures(results: Sequence[IssueResult]) -> dict[str, Ratio]:
    """Recall, precision, false-duplicate rate, the same for sure originals, retrieval ceiling.

    A proposal is "sure" when the proposed original was open at the moment and opened or
    triaged by a maintainer; a gold duplicate is sure when its original was.
    """
    dups = [r for r in results if r.gold.duplicate_of is not None]
    # closed as duplicates of an unknown original: neither false duplicates nor misses
    others = [r for r in results if r.gold.duplicate_of is None and not r.gold.duplicate_unknown]
    # and a proposal on one is neither right nor wrong: out of precision too
    proposals = [r for r in results if _proposed(r) is not None and not r.gold.duplicate_unknown]
    sure = [r for r in dups if r.gold.sure]
    sure_proposals = [r for r in proposals if r.proposed_sure]
    seen = sum(1 for r in dups if set(r.gold.accept) & set(r.decision.candidates))
    return {
        "recall": Ratio(sum(map(duplicate_right, dups)), len(dups)),
        "precision": Ratio(sum(map(duplicate_right, proposals)), len(proposals)),
        "false_rate": Ratio(sum(1 for r in others if _proposed(r) is not None), len(others)),
        "sure_recall": Ratio(sum(map(duplicate_right, sure)), len(sure)),
        "sure_precision": Ratio(sum(map(duplicate_right, sure_proposals)), len(sure_proposals)),
        "ceiling": Ratio(seen, len(dups)),
    }


def recall_at(results: Sequence[IssueResult], ks: tuple[int, ...] = (1, 5, 10)) -> dict[int, Ratio]:
    """Over known duplicates: the true original among the first k candidates retrieved."""
    dups = [r for r in results if r.gold.duplicate_of is not None]
    return {
        k: Ratio(
            sum(1 for r in dups if set(r.gold.accept) & set(r.decision.candidates[:k])), len(dups)
        )
        for k in ks
    }


def question_measures(results: Sequence[IssueResult]) -> tuple[Ratio, Ratio, int, int]:
    """Precision and recall of asking at all, against whether a maintainer asked.

    Issues whose type asks nothing in labels.toml are not scored; unknown comments neither.
    Returns (precision, recall, unknown, not scored).
    """
    scored = [r for r in results if r.gold.question_counted and r.gold.asked is not None]
    unknown = sum(1 for r in results if r.gold.question_counted and r.gold.asked is None)
    both = sum(1 for r in scored if r.decision.questions and r.gold.asked)
    asked = sum(1 for r in scored if r.decision.questions)
    theirs = sum(1 for r in scored if r.gold.asked)
    not_scored = sum(1 for r in results if not r.gold.question_counted)
    return Ratio(both, asked), Ratio(both, theirs), unknown, not_scored


def percentile(values: Sequence[float], p: float) -> float | None:
    """Nearest-rank percentile (p in 0..100); None for no values."""
    if not values:
        return None
    xs = sorted(values)
    k = max(0, math.ceil(p / 100 * len(xs)) - 1)
    return xs[min(k, len(xs) - 1)]


def cost(results: Sequence[IssueResult]) -> Cost:
    usages = [r.decision.usage for r in results]
    latencies = [u.latency_s for u in usages]
    dollars = [u.cost_usd for u in usages if u.cost_usd]
    return Cost(
        latency_p50=percentile(latencies, 50),
        latency_p95=percentile(latencies, 95),
        latency_total=math.fsum(latencies),  # exact: the same whatever the order (shards)
        tokens_in=sum(u.tokens_in for u in usages),
        tokens_out=sum(u.tokens_out for u in usages),
        cost_usd=math.fsum(dollars) if dollars else None,
        tool_calls=sum(u.tool_calls for u in usages),
        turns=sum(u.turns for u in usages),
        forced_submits=sum(1 for u in usages if u.forced_submit),
        dropped=sum(len(r.decision.dropped) for r in results),
        failures=sum(1 for r in results if r.error),
        unanswered=sum(1 for r in results if not r.answered),
    )


def measure(results: Sequence[IssueResult]) -> Measures:
    dup = duplicate_measures(results)
    q_precision, q_recall, q_unknown, q_not_scored = question_measures(results)
    return Measures(
        issues=len(results),
        groups=[label_measure(results, g) for g in GROUPS],
        type_accuracy=type_accuracy(results),
        dup_recall=dup["recall"],
        dup_precision=dup["precision"],
        false_dup_rate=dup["false_rate"],
        sure_recall=dup["sure_recall"],
        sure_precision=dup["sure_precision"],
        retrieval_ceiling=dup["ceiling"],
        recall_at=recall_at(results),
        unknown_originals=sum(1 for r in results if r.gold.duplicate_unknown),
        unknown_flagged=sum(
            1 for r in results if r.gold.duplicate_unknown and _proposed(r) is not None
        ),
        originals_missing=sum(
            1 for r in results if r.gold.duplicate_of is not None and not r.gold.original_known
        ),
        refiled=sum(1 for r in results if r.gold.refiled),
        question_precision=q_precision,
        question_recall=q_recall,
        questions_unknown=q_unknown,
        questions_not_scored=q_not_scored,
        events_unknown=sum(1 for r in results if not r.gold.events_known),
        cost=cost(results),
    )


def _duplicate_text(r: IssueResult) -> str:
    gold, mine = r.gold.duplicate_of, _proposed(r)
    if gold is None:
        return f"✗ #{mine} (not a known duplicate)" if mine is not None else ""
    if mine is None:
        return f"missed #{gold}"
    return f"✓ #{mine}" if duplicate_right(r) else f"✗ #{mine} (was #{gold})"


def _question_text(r: IssueResult) -> str:
    mine = "asked" if r.decision.questions else "did not ask"
    if not r.gold.question_counted:
        return f"{mine} (not scored)" if r.decision.questions else ""
    if r.gold.asked is None:
        return f"{mine} (maintainer: unknown)"
    mark = "✓" if bool(r.decision.questions) == r.gold.asked else "✗"
    theirs = "asked" if r.gold.asked else "did not ask"
    return f"{mark} {mine} (maintainer {theirs})"


def issue_line(r: IssueResult) -> IssueLine:
    line = IssueLine(r.number, r.title, error=r.error)
    for group in GROUPS:
        mine, theirs = engine_labels(r, group), r.gold.group(group)
        if not theirs:
            line.unscored += mine
            continue
        line.right += [n for n in mine if n in theirs]
        line.wrong += [n for n in mine if n not in theirs]
        line.missed += [n for n in theirs if n not in mine]
    line.duplicate = _duplicate_text(r)
    line.question = _question_text(r)
    return line
