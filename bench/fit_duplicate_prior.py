"""Fit the duplicate prior on the shared data; write `issue_assistant/learn/duplicate_prior.json`.

    python bench/fit_duplicate_prior.py [--check]

Every known duplicate whose original is in the same snapshot (`../shared/data`: hf-datasets and
poetry-sample), every report its reporter filed again within minutes (`tracker.duplicates.refiled`:
a duplicate of the first, marked or not) and 400 sampled closed issues per snapshot that are not
known duplicates (less the refiled ones among them) are replayed a minute after opening; the
hand-weighted duplicate score (`index/duplicates.py`) is applied by the engine's own rule at each
threshold, and `duplicate_prior.choose_prior` picks the threshold, once for the score without
sentence embeddings (its candidates found with the shipped word vectors beside BM25, the default)
and once with them. `--check` only prints.
`fit(names)` is also what the retrieval benchmark calls to fit a prior without a repository
(leave-one-repository-out), so a repository's figure is not measured on its own pairs.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import commit  # noqa: E402
from issue_assistant.config.labels import LabelsConfig  # noqa: E402
from issue_assistant.config.sections import Config, VectorKind  # noqa: E402
from issue_assistant.index.duplicates import SCORE_VERSION  # noqa: E402
from issue_assistant.index.local import open_index  # noqa: E402
from issue_assistant.learn import duplicate_model as dm  # noqa: E402
from issue_assistant.learn.duplicate_prior import (  # noqa: E402
    MAX_FALSE_RATE,
    MIN_NEGATIVES,
    PRIOR_FILE,
    DuplicatePrior,
    PriorRow,
    choose_prior,
)
from issue_assistant.learn.learned import Beside  # noqa: E402
from issue_assistant.moment import open_moment  # noqa: E402
from issue_assistant.pipeline import replay_pairs  # noqa: E402
from issue_assistant.tracker.duplicates import (  # noqa: E402
    REFILE_MINUTES,
    refiled,
)
from issue_assistant.tracker.duplicates import originals as known_originals  # noqa: E402
from issue_assistant.tracker.models import Issue  # noqa: E402
from issue_assistant.tracker.snapshot import Snapshot, read_snapshot  # noqa: E402

DATA = ROOT.parent / "shared" / "data"
CACHE = ROOT / ".cache" / "bench"
SNAPSHOTS = ("hf-datasets.jsonl.gz", "poetry-sample.jsonl.gz")
SAMPLE = 400
METHOD = (
    "hand weights (index/duplicates.py, not fit); threshold: the lowest whose precision over the "
    "known pairs reaches the target on enough proposals, else, among those whose false-duplicate "
    f"rate on the sampled non-duplicates is at most {MAX_FALSE_RATE:.0%} (on at least "
    f"{MIN_NEGATIVES} of them, else the highest), the lowest with the most right and then the "
    "fewest false proposals, the engine's rule "
    "(a claim only where evidence carries it and no follow-up, PairFeatures.claim; "
    f"duplicates.choose, margin {Config().duplicates.margin}) applied at each; "
    f"{SAMPLE} sampled closed non-duplicates per snapshot; a report its reporter filed again "
    f"within {REFILE_MINUTES} minutes counts as a duplicate of the first (tracker.duplicates."
    "refiled)"
)


@dataclass(frozen=True)
class Selected:
    """A snapshot's known duplicates with their original in it (the named ones, then the
    reports their reporters filed again), the sampled non-duplicates, and `again`
    (`tracker.duplicates.refiled`: each refiled report's earlier copies)."""

    pairs: list[Issue]
    others: list[Issue]
    again: dict[int, frozenset[int]]

    @property
    def refiled(self) -> int:
        """The reports filed again that nobody marked (counted among `pairs`)."""
        return sum(1 for i in self.pairs if not i.duplicate_of)


def selection(snapshot, sample: int = SAMPLE) -> Selected:  # noqa: ANN001
    """The snapshot's pairs and negatives; the negatives are drawn as `calibrate` and `evaluate`
    draw theirs (`duplicate_model.negatives`)."""
    issues = [i for i in snapshot.all_issues() if not i.is_pull_request]
    again = refiled(issues)
    pairs = [i for i in issues if i.duplicate_of and i.duplicate_of in snapshot]
    pairs += [i for i in issues if i.number in again and not i.duplicate_of]
    closed = [i for i in issues if i.state == "closed"]
    return Selected(pairs, dm.negatives(closed, again, sample), again)


def originals(snapshot, issue, again: dict[int, frozenset[int]]) -> frozenset[int]:  # noqa: ANN001
    """The originals that count as right for `issue` (`tracker.duplicates.originals`): its
    known original's chain, or the earlier copies of a refiled report; none for an issue that
    is neither."""
    return frozenset(known_originals(snapshot, issue, again))


@cache
def selected(name: str, sample: int = SAMPLE) -> tuple[Snapshot, Selected]:
    """The snapshot `name` and its `selection`, read once per process (for each embeddings mode
    and for the counts the prior records)."""
    snapshot = read_snapshot(DATA / name)
    return snapshot, selection(snapshot, sample)


def replays(name: str, vectors: VectorKind, sample: int = SAMPLE) -> list[dm.Replayed]:
    """The snapshot's known duplicates (refiled reports among them) and sampled
    non-duplicates, replayed with `vectors` beside BM25."""
    snapshot, chosen = selected(name, sample)
    index = open_index(snapshot, CACHE, vectors=vectors)
    if vectors == "sentences" and not len(index.vectors or []):
        raise SystemExit("embeddings are not installed: pip install -e '.[embeddings]'")
    config = Config()
    base = open_moment(snapshot, index, LabelsConfig(), config, Beside())
    return [
        replay_pairs(base, i, config=config, again=chosen.again)
        for i in chosen.pairs + chosen.others
    ]


def kind_of(dense: bool) -> VectorKind:
    """The vectors a prior row is fit with: sentence embeddings for the row of the score with a
    dense cosine, else the default word vectors."""
    return "sentences" if dense else "words"


def fit(replayed: dict[str, list[dm.Replayed]], names: tuple[str, ...]) -> PriorRow:
    """The prior's threshold fit on the replays of `names` only."""
    config = Config().duplicates
    chosen = [r for n in names for r in replayed[n]]
    outcomes = [dm.outcome(r, None) for r in chosen]
    known = sum(1 for r in chosen if r.duplicate)
    rows, _ = dm.choose_threshold(outcomes, config.target_precision, known, config.margin)
    return choose_prior(rows, known, len(chosen) - known, config.target_precision)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="print, do not write")
    args = parser.parse_args()
    rows = {}
    for dense in (False, True):
        replayed = {name: replays(name, kind_of(dense)) for name in SNAPSHOTS}
        rows[dense] = fit(replayed, SNAPSHOTS)
    chosen = [selected(n)[1] for n in SNAPSHOTS]
    pairs = sum(len(c.pairs) for c in chosen)
    again = sum(c.refiled for c in chosen)
    prior = DuplicatePrior(
        score_version=SCORE_VERSION,
        data=[f"../shared/data/{n}" for n in SNAPSHOTS],
        pairs=pairs,
        refiled=again,
        negatives=rows[False].negatives,
        target_precision=Config().duplicates.target_precision,
        max_false_rate=MAX_FALSE_RATE,
        method=METHOD,
        commit=commit(),
        date=datetime.now(UTC).strftime("%Y-%m-%d"),
        lexical=rows[False],
        dense=rows[True],
    )
    text = json.dumps(prior.model_dump(mode="json"), indent=2, sort_keys=True) + "\n"
    print(text)
    if not args.check:
        PRIOR_FILE.write_text(text, encoding="utf-8")
        print(f"wrote {PRIOR_FILE}", file=sys.stderr)


if __name__ == "__main__":
    main()
