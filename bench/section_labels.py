"""Benchmark: the `similar` engine's labels on hf-datasets: the vote, the learned model's top
label, and what the engine proposes (confidence tiers), on small and full histories.

Type: the model is fit on labelled issues only and scored on the next issues with exactly one
type label, in time order. Small histories: the oldest 100 and the oldest 300 labelled issues,
scored on the 200 typed issues after them. Full: every labelled issue older than the newest
200 typed issues, or only the 300 just before them. What the engine proposes is what
`learn/tiers.py` chooses with the defaults (a type's floor 0.5, high 0.9): an abstention counts as
a miss. The type prior (`learn/type_prior.py`) is the one fit on poetry-sample alone
(`bench/fit_type_prior.py`): the shipped one is fit on hf-datasets too, so here it would be
measured on issues it was fit on.
The tiers are measured out of fold on the training issues alone; nothing was tuned on the
scored issues. Area and topic are scored the same way over the newest labelled issues.
"""

from __future__ import annotations

import os
import platform
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path

from sklearn.metrics import f1_score

from bench.common import commit
from issue_assistant.config.labels import load_labels
from issue_assistant.config.sections import Config, LabelModelConfig
from issue_assistant.decision import TIERS
from issue_assistant.engines import create
from issue_assistant.index.local import open_index
from issue_assistant.learn.confidence import LABEL_CURVE_MIN
from issue_assistant.learn.model import fit
from issue_assistant.learn.neighbours import SOURCES
from issue_assistant.learn.rows import Row, rows_from
from issue_assistant.learn.tiers import MEASURE_MIN, MIN_LABEL_EVIDENCE, TierRule, choose, measured
from issue_assistant.pipeline import replay
from issue_assistant.tracker.snapshot import Snapshot, read_snapshot

TITLE = "Labels: neighbour vote vs learned model (`bench/section_labels.py`)"
ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "hf-datasets.jsonl.gz"
LABELS = ROOT / "bench" / "hf-datasets.labels.toml"
TEST = 200
SMALL = 300
OLDEST = (100, 300)
RULE = TierRule.of(LabelModelConfig())


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


class Proposed:
    """What the engine proposes for one group on the scored issues: label and tier per issue."""

    def __init__(self) -> None:
        self.labels: list[list[str]] = []
        self.tiers: list[list[str]] = []
        self.why: Counter[str] = Counter()

    def add(self, choice) -> None:  # noqa: ANN001 - learn.tiers.Choice
        self.labels.append([n for n, _, _ in choice.chosen])
        self.tiers.append([t.tier for _, _, t in choice.chosen])
        if not choice.chosen:
            self.why[choice.abstained] += 1


def _learned(train: list[Row], test: list[Row], labels, group: str):  # noqa: ANN001, ANN202
    """The model fit on `train`, the top labels and the engine's proposals on `test`."""
    start = time.perf_counter()
    model = fit(train, labels, test[0].created_at)
    fit_s = time.perf_counter() - start
    gm = model.groups[group]
    lat, probs = [], []
    for r in test:
        t0 = time.perf_counter()
        probs.append(model.probabilities_many([r.doc])[0].get(group, {}))
        lat.append(time.perf_counter() - t0)
    proposed = Proposed()
    for p in probs:
        proposed.add(
            choose(gm.table, p, single=True, limit=1, rule=RULE)
            if gm.mode == "learned"
            else choose(None, {}, single=True, limit=1, rule=RULE)
        )
    return model, probs, proposed, fit_s, statistics.median(lat)


def _settings(rows: list[Row], typed: list[Row], quick: bool) -> list[tuple[str, list, list]]:
    """(name, training rows, scored typed rows) for each setting."""
    n = 50 if quick else TEST
    out = []
    for k in OLDEST:
        train = rows[:k]
        after = [r for r in typed if r.created_at > train[-1].created_at][:n]
        out.append((f"oldest {k} labelled issues", train, after))
    test = typed[-n:]
    older = [r for r in rows if r.created_at < test[0].created_at]
    out.append(("all older labelled issues", older, test))
    out.append((f"{SMALL} labelled issues before the scored", older[-SMALL:], test))
    return out


def _share(num: int, den: int) -> str:
    return f"{num / den:.2f} ({num}/{den})" if den else "– (0/0)"


def run(quick: bool = False) -> str:
    from bench.fit_type_prior import fit as fit_prior
    from issue_assistant.learn import type_prior

    held_out = fit_prior(["poetry-sample"])
    shipped = type_prior.load_prior
    type_prior.load_prior = lambda path=None: held_out  # type: ignore[assignment]
    try:
        return _run(quick)
    finally:
        type_prior.load_prior = shipped


def _run(quick: bool) -> str:
    labels = load_labels(LABELS)
    snapshot = read_snapshot(DATA)
    types = set(labels.proposable("type"))
    rows = rows_from(snapshot, labels, snapshot.repository.fetched_at)
    typed = [r for r in rows if _type_of(r, types)]
    lines = [
        f"Data: `hf-datasets` ({len(rows)} labelled issues; {len(typed)} with one type label); "
        f"engine `similar`; commit `{commit()}`; {machine()}; {time.strftime('%Y-%m-%d')}. "
        "Rerun: `python bench/run.py --only labels`.",
        "",
        "Type, time order (fit on labelled issues, score the next issues with one type label). "
        "Macro F1 over the type labels present among the scored issues, and over bug/enhancement "
        "(the two with enough issues everywhere); an abstention counts as a miss. *Top label* "
        "always answers; *proposed* is what the engine proposes: its best label unless the "
        "training history, out of fold, is sure proposals at that confidence are right less "
        f"often than {RULE.floor_of(True)} (`[labels] type_min_precision`; the upper end of the "
        "90% interval there under it), measured on that label's own proposals where it made "
        f"{LABEL_CURVE_MIN} or more, else on every label's. The type prior beside the "
        "model is the one fit on poetry-sample alone (held out; the shipped one is fit on this "
        "repository too).",
        "",
        "| setting | engine | scored | macro F1 (all) | macro F1 (bug/enhancement) | accuracy | "
        "coverage | precision of proposals | fit time | latency p50 |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    tier_lines = [
        "Tiers of the type proposals above: the share of the scored issues proposed at each tier "
        "and the precision there (high: measured precision ≥ 0.9 on the training history; "
        f"likely ≥ {RULE.likely}; possible ≥ {RULE.floor_of(True)}), and how the history was "
        "measured (with fewer than "
        f"{MEASURE_MIN} out-of-fold predictions it is not: every proposal is possible), and the "
        "source proposed from, chosen on the training history's out-of-fold macro F1 "
        "(`learn/neighbours.py`: the model, a blend, or the vote of the most similar training "
        "issues).",
        "",
        "| setting | measured by | source (out of fold: model / blend / vote) | high | likely | "
        "possible | abstained | top label right where it abstained |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    goals: dict[str, tuple[float, float, int, int]] = {}
    for setting, train, test in _settings(rows, typed, quick):
        gold = [_type_of(r, types) for r in test]
        names = sorted(set(gold))  # type: ignore[arg-type]
        two = [n for n in ("bug", "enhancement") if n in names]
        keep = {r.number for r in train} | {r.number for r in test}
        sub = Snapshot(
            snapshot.repository,
            [i for i in snapshot.all_issues() if i.number in keep or i.is_pull_request],
        )
        start = time.perf_counter()
        voted = _vote(sub, [r.number for r in test], labels)
        vote_lat = (time.perf_counter() - start) / len(test)
        model, probs, proposed, fit_s, lat = _learned(train, test, labels, "type")
        top = [max(p, key=p.get) if p else None for p in probs]
        at = [ls[0] if ls else None for ls in proposed.labels]
        for engine, pred, fit_t, latency in (
            ("vote", [voted[r.number] for r in test], "–", f"{vote_lat * 1000:.0f} ms (analysis)"),
            ("learned, top label", top, f"{fit_s:.1f} s", f"{lat * 1000:.1f} ms"),
            ("learned, proposed", at, f"{fit_s:.1f} s", f"{lat * 1000:.1f} ms"),
        ):
            said = [(g, p) for g, p in zip(gold, pred, strict=True) if p]
            right = sum(g == p for g, p in said)
            f1_all, f1_two = _f1(gold, pred, names), _f1(gold, pred, two)
            lines.append(
                f"| {setting} | {engine} | {len(test)} | {f1_all:.3f} | {f1_two:.3f} | "
                f"{sum(g == p for g, p in zip(gold, pred, strict=True)) / len(gold):.3f} | "
                f"{len(said) / len(gold):.2f} | {_share(right, len(said))} | {fit_t} | {latency} |"
            )
            if engine == "learned, proposed":
                goals[setting] = (f1_all, f1_two, 0, 0)
        cells = []
        for tier in TIERS:
            at_tier = [
                (g, p) for g, p, t in zip(gold, at, proposed.tiers, strict=True) if t == [tier]
            ]
            right = sum(g == p for g, p in at_tier)
            cells.append(f"{len(at_tier) / len(gold):.2f}, precision {_share(right, len(at_tier))}")
            if tier == "high":
                goals[setting] = (*goals[setting][:2], right, len(at_tier))
        gm = model.groups["type"]
        how = f"{gm.table.folds} folds, {gm.table.predictions} predictions" if gm.table else ""
        how = f"{gm.table.method}, {how}" if measured(gm.table) else f"not measured ({how})"
        why = ", ".join(f"{k or 'none'} {n}" for k, n in proposed.why.most_common()) or "–"
        missed = [(g, t) for g, t, a in zip(gold, top, at, strict=True) if a is None]
        hidden = _share(sum(g == t for g, t in missed), len(missed))
        scores = " / ".join(f"{gm.sources[k]:.3f}" for k in SOURCES if k in gm.sources)
        source = f"{gm.source} ({scores})" if scores else gm.source
        tier_lines.append(
            f"| {setting} | {how} | {source} | {' | '.join(cells)} | {why} | {hidden} |"
        )
    lines += ["", *tier_lines, "", *_goals(goals), "", *_multi(rows, labels, quick)]
    lines += [
        "",
        "Fit time includes the out-of-fold fits that measure the tiers (stratified 5-fold below "
        "1,000 labelled issues; at or above, time-ordered where class-complete, else stratified "
        "3-fold); the vote's latency is a whole analysis "
        "(search and vote), the learned model's is the probabilities alone. The snapshot has no "
        "label events, so training labels are today's labels (see the data README). The machine "
        "is shared by several engineers: timings vary with its load.",
    ]
    return "\n".join(lines)


def _goals(goals: dict[str, tuple[float, float, int, int]]) -> list[str]:
    key = f"oldest {SMALL} labelled issues"
    f1_all, f1_two, right, made = goals.get(key, (0.0, 0.0, 0, 0))
    high = [(r, m) for *_, r, m in goals.values()]
    right_all, made_all = sum(r for r, _ in high), sum(m for _, m in high)
    met = "met" if f1_all >= 0.78 else "**not met**"
    met_two = "met" if f1_two >= 0.78 else "**not met**"
    prec = right_all / made_all if made_all else 0.0
    return [
        "The last column is what the floor cost on the scored issues: where the training "
        f"history put a proposal under {RULE.floor_of(True)}, how often the top label was right "
        "after all.",
        "",
        f"Goals. Type macro F1 of what is proposed with {SMALL} labelled issues ≥ 0.78: "
        f"{f1_all:.3f} over every type present ({met}), {f1_two:.3f} over bug/enhancement "
        f"({met_two}). High-confidence precision ≥ 0.9: {_share(right_all, made_all)} over the "
        f"settings above ({'met' if prec >= 0.9 else '**not met**'}; "
        f"{_share(right, made)} with the oldest {SMALL}).",
    ]


def _multi(rows: list[Row], labels, quick: bool) -> list[str]:  # noqa: ANN001
    """Area and topic over the newest labelled issues, per-label tiers as the engine proposes."""
    n = 100 if quick else 400
    train, test = rows[:-n], rows[-n:]
    out = [
        f"Area and topic: fit on the {len(train)} older labelled issues, scored on the newest "
        f"{len(test)} labelled issues (any label of labels.toml; silence is a vote for none), "
        "proposing a label where the lower end of the 90% interval of its own out-of-fold "
        "precision at that confidence reaches the floor (0.6), on at least "
        f"{MIN_LABEL_EVIDENCE} out-of-fold predictions at that confidence or more "
        "(`learn/tiers.py`).",
        "",
        "| group | learned labels | labels that can reach the floor | coverage | precision | "
        "recall | high / likely / possible (precision) | fit time |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    start = time.perf_counter()
    model = fit(train, labels, test[0].created_at)
    fit_s = time.perf_counter() - start
    probs = model.probabilities_many([r.doc for r in test])
    for group in ("area", "topic"):
        gm = model.groups[group]
        if gm.mode != "learned":
            out.append(f"| {group} | vote ({gm.reason}) | – | – | – | – | – | – |")
            continue
        s = score_multi(gm, test, probs, labels, group, RULE)
        tiers = " / ".join(
            f"{s.by_tier[t]} ({_share(s.right_tier[t], s.by_tier[t])})" for t in TIERS
        )
        out.append(
            f"| {group} | {len(gm.classes)} | {s.reachable} | {s.covered / s.scored:.2f} | "
            f"{_share(s.right, s.made)} | {_share(s.right, s.given)} | {tiers} | {fit_s:.1f} s |"
        )
    return out


class MultiScore:
    """What the engine proposes for one multi-label group on scored issues, against their labels:
    issues scored and covered (at least one proposal), proposals made and right, gold labels
    given; per tier, per label and per label and tier likewise; labels whose curve can reach
    the floor. (A plain class: `bench/run.py` loads this module outside `sys.modules`, where a
    dataclass cannot be made.)"""

    def __init__(self, scored: int) -> None:
        self.scored = scored
        self.covered = self.made = self.right = self.given = self.reachable = 0
        self.by_tier: Counter[str] = Counter()
        self.right_tier: Counter[str] = Counter()
        self.label_made: Counter[str] = Counter()
        self.label_right: Counter[str] = Counter()
        self.label_given: Counter[str] = Counter()
        self.label_tier: Counter[tuple[str, str]] = Counter()
        self.label_tier_right: Counter[tuple[str, str]] = Counter()

    def add(self, other: MultiScore) -> None:
        """Count `other` (a later block of scored issues) in: every count and counter added,
        `reachable` the most of either (it is a fit's, not a sum over issues)."""
        for name, value in vars(other).items():
            if name == "reachable":
                self.reachable = max(self.reachable, value)
            elif isinstance(value, Counter):
                getattr(self, name).update(value)
            else:
                setattr(self, name, getattr(self, name) + value)


def score_multi(  # noqa: ANN001 - gm: learn.model.GroupModel, probs and labels as `_multi`'s
    gm, test: list[Row], probs, labels, group: str, rule: TierRule
) -> MultiScore:
    """Score `group`'s proposals (`learn.tiers.choose` under `rule`, as the engine calls it) on
    `test`, given `probs` (`LabelModel.probabilities_many` of the test docs)."""
    s = MultiScore(len(test))
    for r, p in zip(test, probs, strict=True):
        theirs = {x for x in r.labels if labels.group_of(x) == group}
        s.given += len(theirs)
        s.label_given.update(theirs)
        c = choose(gm.table, p.get(group, {}), single=False, limit=labels.limit(group), rule=rule)
        mine = {name: t.tier for name, _, t in c.chosen}
        s.covered += bool(mine)
        s.made += len(mine)
        s.right += len(set(mine) & theirs)
        for name, tier in mine.items():
            s.by_tier[tier] += 1
            s.right_tier[tier] += name in theirs
            s.label_made[name] += 1
            s.label_right[name] += name in theirs
            s.label_tier[name, tier] += 1
            s.label_tier_right[name, tier] += name in theirs
    curves = gm.table.curves if gm.table else {}
    s.reachable = sum(1 for c in curves.values() if rule.bounds(c, per_label=True).possible)
    return s
