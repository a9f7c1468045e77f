"""Benchmark: the `similar` engine's labels, neighbour vote vs learned model, on hf-datasets.

Time split: the issues with exactly one type label, oldest first; the newest `TEST` are scored,
the model is fit on the older ones (all of them, or only the 300 just before). Area and topic are
scored the same way over the newest labelled issues, at the threshold calibrated for
`[labels] target_precision` (0.9) by time-ordered cross-validation on the training issues alone.
"""

from __future__ import annotations

import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

from sklearn.metrics import f1_score

from bench.common import commit
from issue_assistant.config import Config, LabelModelConfig, load_labels
from issue_assistant.engines import create
from issue_assistant.learn.calibration import proposals
from issue_assistant.learn.model import Row, fit, rows_from
from issue_assistant.pipeline import open_index, replay
from issue_assistant.tracker.snapshot import Snapshot, read_snapshot

TITLE = "Labels: neighbour vote vs learned model (`bench/section_labels.py`)"
ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "hf-datasets.jsonl.gz"
LABELS = ROOT / "bench" / "hf-datasets.labels.toml"
TEST = 200
SMALL = 300
TARGET = 0.9


def machine() -> str:
    mem = ""
    try:
        text = Path("/proc/meminfo").read_text()
        kb = int(next(ln for ln in text.splitlines() if ln.startswith("MemTotal")).split()[1])
        mem = f", {kb / 1024 / 1024:.0f} GB RAM"
    except (OSError, StopIteration, ValueError):
        pass
    return f"{os.cpu_count()} cores{mem}, {platform.machine()}, Python {platform.python_version()}"


def _type_of(row: Row, types: set[str]) -> str | None:
    mine = [n for n in row.labels if n in types]
    return mine[0] if len(mine) == 1 else None


def _f1(gold: list[str], pred: list[str | None], labels: list[str]) -> float:
    pred_s = [p or "(none)" for p in pred]
    return float(f1_score(gold, pred_s, labels=labels, average="macro", zero_division=0))


def _vote(snapshot: Snapshot, numbers: list[int], labels) -> dict[int, str | None]:  # noqa: ANN001
    config = Config(labels=LabelModelConfig(model="vote"))
    engine = create("similar", config, labels)
    index = open_index(snapshot, Path(tempfile.mkdtemp(prefix="bench-labels-")))
    out = {}
    for n in numbers:
        a = replay(snapshot, n, index=index, labels=labels, config=config, engine=engine)
        out[n] = a.decision.type
    return out


def _learned(train: list[Row], test: list[Row], labels, group: str):  # noqa: ANN001, ANN202
    start = time.perf_counter()
    model = fit(train, labels, test[0].created_at)
    fit_s = time.perf_counter() - start
    gm = model.groups[group]
    threshold = gm.table.choose(TARGET) if gm.table is not None else None
    lat = []
    probs = []
    for r in test:
        t0 = time.perf_counter()
        probs.append(model.probabilities_many([(r.title, r.prose)])[0].get(group, {}))
        lat.append(time.perf_counter() - t0)
    return model, threshold, probs, fit_s, statistics.median(lat)


def _type_rows(snapshot, labels, quick):  # noqa: ANN001, ANN202
    types = set(labels.proposable("type"))
    rows = rows_from(snapshot, labels, snapshot.repository.fetched_at)
    typed = [r for r in rows if _type_of(r, types)]
    n = 50 if quick else TEST
    return rows, typed[:-n], typed[-n:], types


def run(quick: bool = False) -> str:
    labels = load_labels(LABELS)
    snapshot = read_snapshot(DATA)
    rows, older, test, types = _type_rows(snapshot, labels, quick)
    gold = [_type_of(r, types) for r in test]
    names = sorted(set(gold))  # type: ignore[arg-type]
    three = [n for n in ("bug", "enhancement", "question") if n in names]
    lines = [
        f"Data: `hf-datasets` ({len(rows)} labelled issues; {len(older) + len(test)} with one type "
        f"label), the newest {len(test)} scored; engine `similar`; commit `{commit()}`; "
        f"{machine()}; {time.strftime('%Y-%m-%d')}. Rerun: `python bench/run.py --only labels`.",
        "",
        "Type, time split (fit on older issues, score the newest). Macro F1 over the type labels "
        f"present among the scored issues ({', '.join(names)}), and over {'/'.join(three)} only; "
        "an abstention counts as a miss. The learned model proposes only above the threshold "
        f'calibrated for precision {TARGET} ("at threshold"); "top label" always answers.',
        "",
        f"| setting | engine | macro F1 (all) | macro F1 ({'/'.join(three)}) | accuracy | "
        "coverage | precision at threshold | fit time | latency p50 |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    settings = [("all older labelled issues", older), (f"{SMALL} labelled issues", older[-SMALL:])]
    for setting, train in settings:
        keep = {r.number for r in train} | {r.number for r in test}
        sub = Snapshot(
            snapshot.repository,
            [i for i in snapshot.all_issues() if i.number in keep or i.is_pull_request],
        )
        start = time.perf_counter()
        voted = _vote(sub, [r.number for r in test], labels)
        vote_lat = (time.perf_counter() - start) / len(test)
        vote_pred = [voted[r.number] for r in test]
        answered = [(g, p) for g, p in zip(gold, vote_pred, strict=True) if p]
        lines.append(
            f"| {setting} | vote | {_f1(gold, vote_pred, names):.3f} | "
            f"{_f1(gold, vote_pred, three):.3f} | "
            f"{sum(g == p for g, p in zip(gold, vote_pred, strict=True)) / len(gold):.3f} | "
            f"{len(answered) / len(gold):.2f} | "
            f"{(sum(g == p for g, p in answered) / len(answered)) if answered else 0:.3f} | – | "
            f"{vote_lat * 1000:.0f} ms (whole analysis) |"
        )
        _, threshold, probs, fit_s, lat = _learned(train, test, labels, "type")
        top = [max(p, key=p.get) if p else None for p in probs]
        at = [
            (proposals(p, threshold, single=True, limit=1) or [None])[0]
            if threshold is not None
            else None
            for p in probs
        ]
        said = [(g, p) for g, p in zip(gold, at, strict=True) if p]
        prec = sum(g == p for g, p in said) / len(said) if said else None
        acc = sum(g == p for g, p in zip(gold, top, strict=True)) / len(gold)
        thr = f"{threshold:.2f}" if threshold is not None else "none"
        lines.append(
            f"| {setting} | learned, top label | {_f1(gold, top, names):.3f} | "
            f"{_f1(gold, top, three):.3f} | {acc:.3f} | 1.00 | – | {fit_s:.1f} s | "
            f"{lat * 1000:.1f} ms |"
        )
        lines.append(
            f"| {setting} | learned, at threshold {thr} | {_f1(gold, at, names):.3f} | "
            f"{_f1(gold, at, three):.3f} | "
            f"{sum(g == p for g, p in zip(gold, at, strict=True)) / len(gold):.3f} | "
            f"{len(said) / len(gold):.2f} | {prec if prec is not None else 0:.3f} | "
            f"{fit_s:.1f} s | {lat * 1000:.1f} ms |"
        )
    lines += ["", *_multi(rows, labels, quick)]
    lines += [
        "",
        "Fit time includes the time-ordered cross-validation (three folds) that chooses the "
        "thresholds; the vote's latency is a whole analysis (search and vote), the learned "
        "model's is the probabilities alone. The snapshot has no label events, so training labels "
        "are today's labels (see the data README).",
    ]
    return "\n".join(lines)


def _multi(rows: list[Row], labels, quick: bool) -> list[str]:  # noqa: ANN001
    """Area and topic over the newest labelled issues, at the calibrated threshold."""
    n = 100 if quick else 400
    train, test = rows[:-n], rows[-n:]
    out = [
        f"Area and topic: fit on the {len(train)} older labelled issues, scored on the newest "
        f"{len(test)} labelled issues (any label of labels.toml; silence is a vote for none), at "
        f"the threshold calibrated for precision {TARGET}.",
        "",
        "| group | learned labels | threshold | coverage | precision | recall | fit time |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    start = time.perf_counter()
    model = fit(train, labels, test[0].created_at)
    fit_s = time.perf_counter() - start
    probs = model.probabilities_many([(r.title, r.prose) for r in test])
    for group in ("area", "topic"):
        gm = model.groups[group]
        if gm.mode != "learned":
            out.append(f"| {group} | vote ({gm.reason}) | – | – | – | – | – |")
            continue
        threshold = gm.table.choose(TARGET) if gm.table is not None else None
        covered = made = right = given = 0
        for r, p in zip(test, probs, strict=True):
            theirs = {x for x in r.labels if labels.group_of(x) == group}
            given += len(theirs)
            if threshold is None:
                continue
            mine = proposals(p.get(group, {}), threshold, single=False, limit=labels.limit(group))
            covered += bool(mine)
            made += len(mine)
            right += len(set(mine) & theirs)
        thr = f"{threshold:.2f}" if threshold is not None else "none reaches 0.9: none proposed"
        prec = f"{right / made:.2f} ({right}/{made})" if made else "– (0/0)"
        rec = f"{right / given:.2f} ({right}/{given})" if given else "– (0/0)"
        out.append(
            f"| {group} | {len(gm.classes)} | {thr} | {covered / len(test):.2f} | {prec} | {rec} | "
            f"{fit_s:.1f} s |"
        )
    return out
