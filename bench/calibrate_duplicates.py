"""Calibrate the `similar` engine's duplicate threshold on the shared snapshots' known duplicates.

For every issue with a known original (`duplicate_of`) the similarity of the original, when it is
among the candidates, is a positive; for a sample of closed issues that are not duplicates the best
candidate's similarity is a negative. Prints the recall and false-duplicate rate per threshold.

    python bench/calibrate_duplicates.py [--sample 400]
"""

from __future__ import annotations

import argparse
import random
import tempfile
from pathlib import Path

from issue_assistant.config.sections import Config
from issue_assistant.engines.similar import text_similarity
from issue_assistant.index.local import open_index
from issue_assistant.tracker.asof import AsOfView
from issue_assistant.tracker.snapshot import read_snapshot

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def scores(path: Path, sample: int, candidates: int) -> tuple[list[float], list[float], int]:
    snapshot = read_snapshot(path)
    index = open_index(snapshot, Path(tempfile.mkdtemp()))
    issues = [i for i in snapshot.all_issues() if not i.is_pull_request]
    dups = [i for i in issues if i.duplicate_of and i.duplicate_of in snapshot]
    others = [i for i in issues if not i.duplicate_of and "duplicate" not in i.labels]
    random.Random(7).shuffle(others)
    positives, negatives, missed = [], [], 0
    for issue in dups + others[:sample]:
        view = AsOfView.for_issue(snapshot, issue.number)
        target = view.target()
        hits = index.similar_to(target, as_of=view.moment, limit=candidates)
        sims = {
            h.number: text_similarity(index, target, snapshot.get_issue(h.number)) for h in hits
        }
        if issue.duplicate_of:
            if issue.duplicate_of in sims:
                positives.append(sims[issue.duplicate_of])
            else:
                missed += 1
        elif sims:
            negatives.append(max(sims.values()))
    return positives, negatives, missed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=400)
    args = parser.parse_args()
    candidates = Config().duplicates.candidates
    pos: list[float] = []
    neg: list[float] = []
    missed = 0
    for name in ("hf-datasets.jsonl.gz", "poetry-sample.jsonl.gz"):
        p, n, m = scores(DATA / name, args.sample, candidates)
        pos, neg, missed = pos + p, neg + n, missed + m
    print(f"known duplicates: {len(pos) + missed} ({missed} originals not among the candidates)")
    print("positives:", " ".join(f"{s:.2f}" for s in sorted(pos)))
    print(f"non-duplicates sampled: {len(neg)}")
    print("threshold  recall(of all known)  false-duplicate rate")
    total = len(pos) + missed
    for t in [x / 20 for x in range(6, 18)]:
        r = sum(s >= t for s in pos)
        f = sum(s >= t for s in neg)
        print(
            f"  {t:.2f}     {r}/{total} = {r / total:.2f}"
            f"        {f}/{len(neg)} = {f / len(neg):.3f}"
        )


if __name__ == "__main__":
    main()
