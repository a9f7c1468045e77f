"""The duplicate threshold where a repository has too few known duplicates to calibrate its own.

A prior, fit once on the known duplicate pairs of the shared data (`../shared/data`:
hf-datasets and poetry-sample; a report its reporter filed again within minutes counts as a
duplicate of the first, `tracker.duplicates.refiled`) by `bench/fit_duplicate_prior.py` and
shipped as `duplicate_prior.json` beside this module, with how it was fit: the data, its counts,
the rule and the table row it chose. One threshold for the lexical score and one for the score
with a dense cosine. The rule (`choose_prior`): the lowest threshold whose precision on the known
pairs reaches the target on enough proposals (as `calibrate` chooses); failing that, the
lowest whose false-duplicate rate on the sampled non-duplicates is at most `MAX_FALSE_RATE`,
when there are enough of them to show it (`MIN_NEGATIVES`); failing that, the highest.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

PRIOR_FILE = Path(__file__).with_name("duplicate_prior.json")
# The false-duplicate rate the project aims at (docs/benchmarks.md, "Where the goals stand").
MAX_FALSE_RATE = 0.01
MIN_NEGATIVES = round(1 / MAX_FALSE_RATE)


class PriorRow(BaseModel):
    """What the chosen threshold did on the data it was fit on."""

    model_config = ConfigDict(extra="forbid", strict=True)

    threshold: Annotated[float, Field(gt=0, le=1)]
    proposals: Annotated[int, Field(ge=0)]
    right: Annotated[int, Field(ge=0)]
    false: Annotated[int, Field(ge=0)]
    duplicates: Annotated[int, Field(ge=0)]
    negatives: Annotated[int, Field(ge=0)]
    rule: str  # "precision" (the target was reached) or "false rate"


class DuplicatePrior(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    version: int = 1
    score_version: int  # `index.duplicates.SCORE_VERSION` it was fit for
    data: list[str]
    pairs: Annotated[int, Field(ge=0)]  # known duplicates with their original in the data
    # of them, reports filed again by their reporter (`tracker.duplicates.refiled`)
    refiled: Annotated[int, Field(ge=0)] = 0
    negatives: Annotated[int, Field(ge=0)]
    target_precision: Annotated[float, Field(gt=0, le=1)]
    max_false_rate: Annotated[float, Field(ge=0, le=1)]
    method: str
    commit: str
    date: str
    lexical: PriorRow
    dense: PriorRow | None = None

    def row(self, dense: bool) -> PriorRow:
        return self.dense if dense and self.dense is not None else self.lexical

    def describe(self, dense: bool) -> str:
        names = ", ".join(Path(d).name.split(".")[0] for d in self.data)
        mode = "with" if dense and self.dense is not None else "without"
        return (
            f"the prior fit on the {self.pairs} known duplicates of the shared data ({names}), "
            f"{mode} embeddings"
        )


@cache
def load_prior(path: Path = PRIOR_FILE) -> DuplicatePrior:
    """The shipped prior (validated: it is package data, so an invalid one is a bug)."""
    return DuplicatePrior.model_validate_json(path.read_text(encoding="utf-8"))


def choose_prior(
    rows: Sequence[tuple[float, int, int, int]], duplicates: int, negatives: int, target: float
) -> PriorRow:
    """The prior's threshold from rows of (threshold, proposals, right, false) in rising
    threshold order (`duplicate_model.choose_threshold`'s table)."""
    from issue_assistant.learn.duplicate_model import MIN_PROPOSALS

    need = min(MIN_PROPOSALS, max(duplicates, 1))

    def row(t: float, p: int, c: int, f: int, rule: str) -> PriorRow:
        return PriorRow(
            threshold=t,
            proposals=p,
            right=c,
            false=f,
            duplicates=duplicates,
            negatives=negatives,
            rule=rule,
        )

    for t, p, c, f in rows:
        if p >= need and c / p >= target:
            return row(t, p, c, f, "precision")
    # a false rate of at most 1 in 100 cannot be shown on fewer than 100 negatives
    if negatives >= MIN_NEGATIVES:
        capped = [r for r in rows if r[3] / negatives <= MAX_FALSE_RATE]
        if capped:
            # the most right proposals under the cap, with the fewest false ones among those:
            # a lower threshold that adds false proposals and no right one is not taken
            most = max(c for _, _, c, _ in capped)
            fewest = min(f for _, _, c, f in capped if c == most)
            t, p, c, f = next(r for r in capped if r[2] == most and r[3] == fewest)
            return row(t, p, c, f, "false rate")
    return row(*rows[-1], "highest")
