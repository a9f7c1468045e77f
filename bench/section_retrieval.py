"""Benchmark: duplicate retrieval (recall@1/5/10) and the duplicate decision on the shared data.

    python -c 'import bench.section_retrieval as s; print(s.run())'

Every known duplicate pair in `../shared/data` whose original is in the same snapshot (12 in
hf-datasets, 2 in poetry-sample), and every report its reporter filed again within minutes
(`tracker.duplicates.refiled`: 5 in hf-datasets, #4454 marked too, 2 in poetry-sample, a duplicate
of the first whether or not anybody marked it), is replayed one minute after the duplicate was
opened; the true original (or the original it is itself a duplicate of) counts when it is among the
top k. Negatives for the decision are closed issues that are not known duplicates (some surely are,
so the false-duplicate rate is pessimistic). Then the decision as the engine makes it with the
duplicate prior, fit without the scored snapshot (leave-one-repository-out) and as shipped
(in-sample), with the default word vectors and with sentence embeddings, also on the 200 issues
`evaluate` scores on hf-datasets.
Vectors are cached in `.cache/bench` (the first run embeds every issue: minutes).
"""

from __future__ import annotations

import platform
import time
from pathlib import Path

from bench.common import commit
from bench.fit_duplicate_prior import originals
from issue_assistant.config.labels import LabelsConfig
from issue_assistant.config.sections import Config, VectorKind
from issue_assistant.context import Context
from issue_assistant.index import duplicates
from issue_assistant.index.candidates import similar_candidates
from issue_assistant.index.local import open_index
from issue_assistant.index.retrieval import Retriever
from issue_assistant.learn.learned import Beside
from issue_assistant.moment import Moment, open_moment
from issue_assistant.pipeline import replay_pairs
from issue_assistant.tracker.asof import AsOfView
from issue_assistant.tracker.duplicates import REFILE_MINUTES, refiled
from issue_assistant.tracker.snapshot import read_snapshot

TITLE = "Duplicate retrieval and decision"
ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
CACHE = ROOT / ".cache" / "bench"
SNAPSHOTS = ("hf-datasets.jsonl.gz", "poetry-sample.jsonl.gz")
MODES = (("BM25, title", "title"), ("BM25, title + body", "bm25"), ("dense", "dense"))
VECTOR_WORDS = {"words": "word vectors", "sentences": "sentence embeddings"}
THRESHOLDS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


def _load(name: str, vectors: VectorKind = "sentences"):  # noqa: ANN202
    snapshot = read_snapshot(DATA / name)
    index = open_index(snapshot, CACHE, vectors=vectors)
    return snapshot, index


def _recall(snapshot, index, pairs, again) -> dict[str, list[int | None]]:  # noqa: ANN001
    """Per mode, the rank of the true original for each pair (None: not in the top 10)."""
    ranks: dict[str, list[int | None]] = {m: [] for _, m in (*MODES, ("hybrid", "hybrid"))}
    retriever = Retriever(index)
    for dup in pairs:
        view = AsOfView.for_issue(snapshot, dup.number)
        target = view.target()
        accept = originals(snapshot, dup, again)
        for mode in ranks:
            found = retriever.candidates(target, view.moment, 10, mode=mode)
            numbers = [m.number for m in found]
            rank = next((i for i, n in enumerate(numbers, 1) if n in accept), None)
            ranks[mode].append(rank)
    return ranks


def _scores(snapshot, index, issues, again, config: Config):  # noqa: ANN001, ANN202
    """(issue, [(candidate number, score)], accepted originals) for the decision."""
    out = []
    for issue in issues:
        view = AsOfView.for_issue(snapshot, issue.number)
        target, limit = view.target(), config.duplicates.candidates
        ctx = Context(
            issue=target,
            moment=Moment.build(view, index, LabelsConfig(), Beside(), as_of=view.moment),
            labels=LabelsConfig(),
            project="",
            as_of=view.moment,
            candidates=similar_candidates(index, target, view.moment, limit),
        )
        # the score a claim rests on (0 without evidence, or for a follow-up), as the engine
        scored = [(a.candidate, c) for a, c in duplicates.claims(ctx, config.duplicates.candidates)]
        out.append((issue, scored, originals(snapshot, issue, again)))
    return out


def _decide(rows, threshold: float, margin: float) -> tuple[int, int, int, int, int]:  # noqa: ANN001
    """(right, proposals, positives, false proposals on negatives, negatives)."""
    right = proposals = positives = false = negatives = 0
    for _, scored, accept in rows:
        chosen = duplicates.choose(scored, threshold, margin)
        if accept:
            positives += 1
        else:
            negatives += 1
        if chosen is None:
            continue
        proposals += 1
        if accept and chosen[0].issue.number in accept:
            right += 1
        elif not accept:
            false += 1
    return right, proposals, positives, false, negatives


def _share(num: int, den: int) -> str:
    return f"{num / den:.2f} ({num}/{den})" if den else f"– (0/{den})"


def _eval_set(snapshot) -> list:  # noqa: ANN001
    """The issues `evaluate --limit 200` scores on the snapshot, with its labels file."""
    from issue_assistant.config.labels import load_labels
    from issue_assistant.evaluate.selection import select

    labels = load_labels(ROOT / "bench" / "hf-datasets.labels.toml")
    return select(snapshot, labels, Config().approval.bot_login, 200).issues


def _engine_rows(replayed, threshold: float, margin: float) -> dict[str, int]:  # noqa: ANN001
    """What the engine's rule does at `threshold` over replayed issues: right proposals, known
    duplicates, false proposals, other issues, proposals, and proposals whose reason quotes
    shared evidence."""
    from issue_assistant.comment import RELATED_SHARE

    keys = ("right", "dups", "false", "others", "proposals", "quoted", "related")
    out: dict = dict.fromkeys(keys, 0)
    out["false_pairs"] = []
    for r in replayed:
        scored = sorted(((n, f.claim(), f) for n, f in r.pairs), key=lambda t: -t[1])
        chosen = duplicates.choose([((n, f), s) for n, s, f in scored], threshold, margin)
        out["dups" if r.duplicate else "others"] += 1
        proposed = chosen[0][0] if chosen is not None else None
        # the true original shown as "possibly related" (not proposed), as the comment does
        out["related"] += any(
            n in r.accept
            and n != proposed
            and (
                f.score() >= RELATED_SHARE * threshold
                or f.evidence.errors
                or f.evidence.frames
                or f.follow_up
            )
            for n, s, f in scored[: comment_rows()]
        )
        if chosen is None:
            continue
        (number, features), _ = chosen
        out["proposals"] += 1
        out["quoted"] += bool(features.evidence)
        if r.duplicate and number in r.accept:
            out["right"] += 1
        elif not r.duplicate:
            out["false"] += 1
            out["false_pairs"].append((r.number, number))
    return out


def comment_rows() -> int:
    from issue_assistant.comment import TABLE_ROWS

    return TABLE_ROWS


def _decision_lines(quick: bool) -> list[str]:
    """The duplicate decision as the engine makes it with the prior, per snapshot and mode:
    the prior fit without the scored repository (leave-one-repository-out) and the shipped one
    (fit on both, so in-sample for each), on the bench's sample and on evaluate's 200."""
    from bench.fit_duplicate_prior import fit, kind_of, replays
    from issue_assistant.config.labels import load_labels
    from issue_assistant.learn.duplicate_prior import load_prior

    config = Config()
    margin = config.duplicates.margin
    sample = 100 if quick else 400
    shipped = load_prior()
    lines = [
        "",
        "The decision as the engine makes it with the prior (`learn/duplicate_prior.json`, "
        "used where a repository has too few known duplicates to calibrate: both snapshots "
        "here). **Leave-one-repository-out**: the threshold fit on the other snapshot only; "
        "**fit on both**: as the shipped one is, so in-sample (the row says so if the shipped "
        "file differs: refit it with `python bench/fit_duplicate_prior.py`). Quoted: proposals "
        "whose reason quotes shared evidence (an error, frames, names or title words). "
        "Original possibly related: known duplicates whose original the comment lists as "
        "possibly related (not proposed as the duplicate). "
        "Evaluate's 200: the issues `evaluate --limit 200` scores on hf-datasets (its known "
        "duplicates and the other issues).",
        "",
        "| data | vectors | prior | threshold | right / known duplicates | false / others "
        "| quoted / proposals | original possibly related |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    falses: list[str] = []
    hf = read_snapshot(DATA / SNAPSHOTS[0])
    labels = load_labels(ROOT / "bench" / "hf-datasets.labels.toml")
    scored_eval = _eval_set(hf)
    for dense in (False, True):
        kind = kind_of(dense)
        replayed = {name: replays(name, kind, sample) for name in SNAPSHOTS}
        index = open_index(hf, CACHE, vectors=kind)
        again = refiled(hf.all_issues())
        base = open_moment(hf, index, labels, config, Beside())
        eval_replays = [replay_pairs(base, i, config=config, again=again) for i in scored_eval]
        for name in SNAPSHOTS:
            loro = fit(replayed, tuple(n for n in SNAPSHOTS if n != name))
            sets = [(name.split(".")[0], replayed[name])]
            if name == SNAPSHOTS[0]:
                sets.append(("hf-datasets, evaluate's 200", eval_replays))
            for label, data in sets:
                both = fit(replayed, SNAPSHOTS)
                in_sample = "fit on both (in-sample)"
                if abs(both.threshold - shipped.row(dense).threshold) > 1e-9:
                    in_sample += f"; the shipped file says {shipped.row(dense).threshold:.3f}"
                for prior_name, row in (
                    ("leave-one-repository-out", loro),
                    (in_sample, both),
                ):
                    o = _engine_rows(data, row.threshold, margin)
                    if prior_name == in_sample and o["false_pairs"]:
                        falses.append(
                            f"{label}, {VECTOR_WORDS[kind]}: "
                            + ", ".join(f"#{a} → #{b}" for a, b in o["false_pairs"])
                        )
                    lines.append(
                        f"| {label} | {VECTOR_WORDS[kind]} | {prior_name} | "
                        f"{row.threshold:.3f} ({row.rule}) | {o['right']} / {o['dups']} | "
                        f"{o['false']} / {o['others']} | {o['quoted']} / {o['proposals']} | "
                        f"{o['related']} / {o['dups']} |"
                    )
    lines += [
        "",
        "The false duplicates at the shipped threshold (fit on both), for a check by hand: "
        + ("; ".join(falses) if falses else "none")
        + ".",
    ]
    return lines


def run(quick: bool = False) -> str:
    from bench.fit_duplicate_prior import selection

    start = time.perf_counter()
    config = Config()
    sample = 100 if quick else 400
    all_ranks: dict[str, list[int | None]] = {}
    rows = []
    pair_numbers: list[int] = []
    vectors = 0
    for name in SNAPSHOTS:
        snapshot, index = _load(name)
        vectors += len(index.vectors or [])
        chosen = selection(snapshot, sample)
        pair_numbers += [p.number for p in chosen.pairs]
        for mode, ranks in _recall(snapshot, index, chosen.pairs, chosen.again).items():
            all_ranks.setdefault(mode, []).extend(ranks)
        _, words = _load(name, "words")
        for mode, ranks in _recall(snapshot, words, chosen.pairs, chosen.again).items():
            if mode in ("dense", "hybrid"):
                all_ranks.setdefault(f"words {mode}", []).extend(ranks)
        rows += _scores(snapshot, index, chosen.pairs + chosen.others, chosen.again, config)
    n = len(all_ranks["hybrid"])
    lines = [
        f"Data: every known duplicate pair with its original in the same snapshot, and every "
        f"report its reporter filed again within {REFILE_MINUTES} minutes with nearly the same "
        "title and body, or the same title over a body that says nothing more, a duplicate of "
        "the first whether or not anybody marked it "
        f"(`tracker.duplicates.refiled`) ({n}: {', '.join(SNAPSHOTS)}), replayed one minute "
        "after the duplicate was opened; "
        f"{vectors} issue vectors (all-MiniLM-L6-v2 int8, onnxruntime, 256 tokens). "
        f"Commit `{commit()}`, {platform.machine()} ({_cpus()} cores), Python "
        f"{platform.python_version()}; {time.perf_counter() - start:.0f} s.",
        "",
        "| retrieval | recall@1 | recall@5 | recall@10 |",
        "| --- | --- | --- | --- |",
    ]
    for label, mode in (
        *MODES,
        ("**hybrid** (BM25 + dense, reciprocal rank fusion)", "hybrid"),
        ("word vectors (shipped, no model)", "words dense"),
        ("**hybrid, word vectors** (BM25 + word vectors: the default)", "words hybrid"),
    ):
        ranks = all_ranks[mode]
        cells = [
            _share(sum(1 for r in ranks if r is not None and r <= k), len(ranks))
            for k in (1, 5, 10)
        ]
        lines.append(f"| {label} | {' | '.join(cells)} |")
    missed = [
        f"#{n}" for n, rank in zip(pair_numbers, all_ranks["hybrid"], strict=True) if rank is None
    ]
    lines += [
        "",
        f"Not in the hybrid top 10: {', '.join(missed) if missed else 'none'}.",
        "",
        f"Duplicate decision (`index/duplicates.py`: pairwise score over the first "
        f"{config.duplicates.candidates} candidates, margin {config.duplicates.margin} over the "
        f"second best) on the {n} known duplicates and {len(rows) - n} closed issues that are "
        "not known duplicates:",
        "",
        "| threshold | precision | recall | false-duplicate rate |",
        "| --- | --- | --- | --- |",
    ]
    from issue_assistant.learn.duplicate_prior import load_prior

    prior = load_prior().row(dense=True).threshold
    for t in sorted({*THRESHOLDS, prior}):
        right, proposals, positives, false, negatives = _decide(rows, t, config.duplicates.margin)
        mark = f"**{t}** (the shipped prior, with embeddings)" if abs(t - prior) < 1e-9 else f"{t}"
        lines.append(
            f"| {mark} | {_share(right, proposals)} | {_share(right, positives)} | "
            f"{_share(false, negatives)} |"
        )
    lines += _decision_lines(quick)
    return "\n".join(lines) + "\n"


def _cpus() -> int:
    import os

    return os.cpu_count() or 0


if __name__ == "__main__":
    print(run())
