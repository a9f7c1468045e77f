"""Areas on a stand-in with many labels (issue 30): the multi-label rule of `learn/tiers.py` on
hf-datasets with every frequent label in one area group.

    python bench/area_proxy.py            # a Markdown section on stdout (about 75 s)
    python bench/area_proxy.py --quick    # 100 scored issues, the shipped rule alone

Run by hand, not by `bench/run.py`. The goal's repository (22 areas) is not in the shared data;
hf-datasets has one learnable area label. The stand-in: every label on at least `MIN_ISSUES`
issues of the snapshot (but `duplicate`, a resolution rather than what an issue is about) is an
area label of a labels.toml written to a temporary folder, names as they are, the shipped
`max_areas`. *all labels*: the 14 labels in one area group; *without bug/enhancement*: those two
as the type group (so the same issues are labelled) and the 12 others as areas, closer to areas
that each cover a part of the issues.

Time order as the labels section scores area (`bench/section_labels._multi`): the newest
`SCORED` labelled issues are scored, then on their own the `SCORED` before them; the model is fit
on every labelled issue older than the scored ones, or on the `SMALL` just before them (the
goal's setting). Either one fit for all the scored issues, or fits again as the engine does
(*refit*): a fit at the first scored issue and again once as many labelled issues were created
since as `learn.saved.stale` asks (`REFIT_COUNT`, or `REFIT_SHARE` of what it was fit on: every
30 issues on 300, every 50 on more), each block scored by the model of its moment, as a live
run or `evaluate`'s time buckets would. Every fit is `learn.model.fit`, with its out-of-fold
curves; each rule is then `learn.tiers.choose` on the same probabilities
(`section_labels.score_multi`): the floor (`[labels] min_precision`) and the evidence minimum
(`learn.tiers.MIN_LABEL_EVIDENCE`, set for the run) vary, the rest is the shipped default. An
issue counts as labelled from its opening (the snapshot's labels are today's), as everywhere in
the benches. About 75 s on 2 cores.
"""

from __future__ import annotations

import math
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import tomlkit

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import commit  # noqa: E402
from bench.section_labels import DATA, MultiScore, _share, machine, score_multi  # noqa: E402
from issue_assistant.config.labels import LabelsConfig, load_labels  # noqa: E402
from issue_assistant.config.sections import LabelModelConfig  # noqa: E402
from issue_assistant.decision import TIERS  # noqa: E402
from issue_assistant.learn import tiers  # noqa: E402
from issue_assistant.learn.model import fit  # noqa: E402
from issue_assistant.learn.rows import Row, rows_from  # noqa: E402
from issue_assistant.learn.saved import REFIT_COUNT, REFIT_SHARE  # noqa: E402
from issue_assistant.tracker.snapshot import Snapshot, read_snapshot  # noqa: E402

MIN_ISSUES = 14
NOT_AN_AREA = {"duplicate"}
TYPES = ("bug", "enhancement")
SCORED = 400
SMALL = 300
FLOORS = (0.6, 0.7, 0.75, 0.8)
EVIDENCE = (20, 30, 40)
SHIPPED = (LabelModelConfig().min_precision, tiers.MIN_LABEL_EVIDENCE)
GOAL_PRECISION, GOAL_HIGH, GOAL_COVERAGE = 0.85, 0.9, 0.6


def frequent(snapshot: Snapshot) -> list[str]:
    """The snapshot's labels on at least `MIN_ISSUES` issues (no pull requests), most used
    first, but those that are not what an issue is about."""
    counts = Counter(
        name for i in snapshot.all_issues() if not i.is_pull_request for name in i.labels
    )
    return [n for n, c in counts.most_common() if c >= MIN_ISSUES and n not in NOT_AN_AREA]


def stand_in(names: list[str], folder: Path, types: tuple[str, ...] = ()) -> LabelsConfig:
    """A labels.toml with `names` as areas (those in `types` as types), loaded as the engine
    loads one."""
    doc = tomlkit.document()
    groups = {
        "type": [n for n in names if n in types],
        "area": [n for n in names if n not in types],
    }
    for group, mine in groups.items():
        aot = tomlkit.aot()
        for name in mine:
            aot.append(tomlkit.item({"name": name}))
        if aot:
            doc.add(group, aot)
    path = folder / "labels.toml"
    path.write_text(tomlkit.dumps(doc))
    return load_labels(path)


@contextmanager
def evidence(n: int) -> Iterator[None]:
    """`learn.tiers.MIN_LABEL_EVIDENCE` set to `n` for the block."""
    shipped = tiers.MIN_LABEL_EVIDENCE
    tiers.MIN_LABEL_EVIDENCE = n
    try:
        yield
    finally:
        tiers.MIN_LABEL_EVIDENCE = shipped


def rules(quick: bool) -> list[tuple[float, int]]:
    if quick:
        return [SHIPPED]
    return (
        [(f, SHIPPED[1]) for f in FLOORS]
        + [(SHIPPED[0], e) for e in EVIDENCE[1:]]
        + [(0.75, e) for e in EVIDENCE[1:]]
    )


def measure(train: list[Row], test: list[Row], labels: LabelsConfig, quick: bool):  # noqa: ANN201
    """The fit's time, its area group, and the score of each rule (floor, evidence)."""
    start = time.process_time()
    model = fit(train, labels, test[0].created_at)
    fit_s = time.process_time() - start
    gm = model.groups["area"]
    probs = model.probabilities_many([r.doc for r in test])
    scores: dict[tuple[float, int], MultiScore] = {}
    for floor, n in rules(quick):
        rule = tiers.TierRule.of(LabelModelConfig(min_precision=floor))
        with evidence(n):
            scores[(floor, n)] = score_multi(gm, test, probs, labels, "area", rule)
    return fit_s, gm, scores


def blocks(
    rows: list[Row], test: list[Row], small: int | None
) -> list[tuple[list[Row], list[Row]]]:
    """(training rows, the scored rows it answers) between the engine's refits: a fit at a scored
    issue learns from the labelled rows before it (the `small` newest of them, or all), and
    answers until `learn.saved.stale`'s count of labelled issues created since is reached."""
    start = next(i for i, r in enumerate(rows) if r is test[0])
    out, i = [], 0
    while i < len(test):
        older = rows[: start + i]
        train = older[-small:] if small else older
        n = max(1, math.ceil(min(REFIT_COUNT, REFIT_SHARE * len(train))))
        out.append((train, test[i : i + n]))
        i += n
    return out


def merged(parts: list[MultiScore]) -> MultiScore:
    """The scores of consecutive blocks as one (`MultiScore.add`)."""
    s = MultiScore(0)
    for p in parts:
        s.add(p)
    return s


def measure_refit(
    rows: list[Row], test: list[Row], labels: LabelsConfig, quick: bool, small: int | None
):  # noqa: ANN201
    """As `measure`, refit as the engine does (`blocks`): the fits' CPU, the last fit's area
    group, each rule's score over every block, and how many fits."""
    done = [measure(train, part, labels, quick) for train, part in blocks(rows, test, small)]
    scores = {rule: merged([d[2][rule] for d in done]) for rule in done[0][2]}
    return sum(d[0] for d in done), done[-1][1], scores, len(done)


def _met(s: MultiScore) -> str:
    high = s.right_tier["high"] / s.by_tier["high"] if s.by_tier["high"] else 0.0
    ok = (
        s.made
        and s.right / s.made >= GOAL_PRECISION
        and high >= GOAL_HIGH
        and s.covered / s.scored >= GOAL_COVERAGE
    )
    return "yes" if ok else "no"


def summary(setting: str, s: MultiScore, rule: tuple[float, int]) -> str:
    cells = " | ".join(f"{s.by_tier[t]} ({_share(s.right_tier[t], s.by_tier[t])})" for t in TIERS)
    return (
        f"| {setting} | {rule[0]} | {rule[1]} | {s.reachable} | {s.covered / s.scored:.2f} | "
        f"{_share(s.right, s.made)} | {_share(s.right, s.given)} | {cells} | {_met(s)} |"
    )


def _made(s: MultiScore, name: str) -> str:
    made = s.label_made[name]
    return f"{made}, {_share(s.label_right[name], made)}" if made else "0"


def per_label(scores: dict[tuple[float, int], MultiScore], order: list[str]) -> list[str]:
    """Per label: its gold count, what each floor (shipped evidence) proposes, and the shipped
    rule's proposals per tier."""
    shown = [r for r in scores if r[1] == SHIPPED[1]]
    head = " | ".join(f"floor {f}" for f, _ in shown)
    lines = [
        f"| label | in the scored | {head} | shipped rule: high / likely / possible |",
        "| --- | --- |" + " --- |" * (len(shown) + 1),
    ]
    first, shipped = scores[shown[0]], scores[SHIPPED]
    for name in order:
        cells = " | ".join(_made(scores[r], name) for r in shown)
        by_tier = " / ".join(
            _made_at(shipped.label_tier[name, t], shipped.label_tier_right[name, t]) for t in TIERS
        )
        lines.append(f"| {name} | {first.label_given[name]} | {cells} | {by_tier} |")
    return lines


def _made_at(made: int, right: int) -> str:
    return f"{made} ({right / made:.2f})" if made else "0"


def windows(rows: list[Row], n: int) -> list[tuple[str, list[Row], list[Row]]]:
    """(name, older rows, scored rows): the newest `n` labelled issues, and the `n` before them
    (scored on their own, fit on what is older than them)."""
    out = []
    for k, name in ((0, f"newest {n}"), (1, f"the {n} before")):
        test = rows[len(rows) - (k + 1) * n : len(rows) - k * n]
        out.append((name, [r for r in rows if r.created_at < test[0].created_at], test))
    return out


def main(quick: bool = False) -> str:
    began = time.perf_counter()
    snapshot = read_snapshot(DATA)
    names = frequent(snapshot)
    n = 100 if quick else SCORED
    table = [
        "| scored | variant | history | floor | evidence | labels that can reach the floor | "
        "coverage | precision | recall | high / likely / possible (precision) | goal met |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    labels_out: list[str] = []
    fits: list[str] = []
    for variant, types in (("all labels", ()), ("without bug/enhancement", TYPES)):
        with tempfile.TemporaryDirectory(prefix="area-proxy-") as tmp:
            labels = stand_in(names, Path(tmp), types)
        rows = rows_from(snapshot, labels, snapshot.repository.fetched_at)
        for scored, older, test in windows(rows, n)[: 1 if quick else 2]:
            histories = [
                ("all older", older, False, None),
                (f"{SMALL} before", older[-SMALL:], False, SMALL),
                ("all older, refit", older, True, None),
                (f"{SMALL} before, refit", older[-SMALL:], True, SMALL),
            ]
            for history, train, refit, small in histories:
                setting = f"{scored} | {variant} | {history} ({len(train)})"
                if refit:
                    fit_s, gm, scores, k = measure_refit(rows, test, labels, quick, small)
                    count = f" in {k} fits"
                else:
                    fit_s, gm, scores = measure(train, test, labels, quick)
                    count = ""
                method = f", {gm.table.method}" if gm.table else ""
                fits.append(
                    f"{setting.replace(' |', ',')}: {len(gm.classes)} labels learned, "
                    f"{fit_s:.1f} s CPU{count}{method}"
                )
                table += [summary(setting, s, rule) for rule, s in scores.items()]
                labels_out += ["", f"Per label, {setting.replace(' |', ',')}:", ""]
                labels_out += per_label(scores, [x for x in names if x not in types])
    return "\n".join(
        [
            f"Data: `hf-datasets`, commit `{commit()}`, {machine()}, "
            f"{time.strftime('%Y-%m-%d')}; `python bench/area_proxy.py`. Area labels "
            f"({len(names)}, each on {MIN_ISSUES}+ issues): {', '.join(f'`{x}`' for x in names)}. "
            "Fits: " + "; ".join(fits) + ".",
            "",
            *table,
            "",
            "Per label: proposals and their precision at each floor (evidence "
            f"{SHIPPED[1]}), and the shipped rule's proposals per tier (precision).",
            *labels_out,
            "",
            f"Run time: {time.perf_counter() - began:.0f} s wall.",
        ]
    )


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="Areas on a stand-in with many labels.")
    parser.add_argument("--quick", action="store_true", help="100 scored, the shipped rule alone")
    print(main(parser.parse_args().quick))
