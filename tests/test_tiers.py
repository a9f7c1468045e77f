"""Confidence tiers and calibration on small histories: the curve, class-complete folds, the
small-history path, the tier words, the recorded thresholds, and no group off without a word."""

from __future__ import annotations

import random
from datetime import timedelta

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from issue_assistant.comment import Plan, render_comment
from issue_assistant.config.labels import LabelsConfig
from issue_assistant.config.sections import Config, LabelModelConfig
from issue_assistant.decision import LabelTier
from issue_assistant.engines import create
from issue_assistant.index.local import open_index
from issue_assistant.learn import folds
from issue_assistant.learn.confidence import (
    LABEL_CURVE_MIN,
    MIN_BUCKET,
    Bucket,
    Curve,
    ThresholdTable,
    fit_curve,
    isotonic,
    table_for,
    wilson,
)
from issue_assistant.learn.model import fit
from issue_assistant.learn.rows import rows_from
from issue_assistant.learn.tiers import MEASURE_MIN, TierRule, choose, in_tenths
from issue_assistant.pipeline import replay
from issue_assistant.tracker.asof import AsOfView
from tests.strategies import examples
from tests.test_learn import LABELS, NOUNS, T0, snap, synthetic

RULE = TierRule.of(LabelModelConfig())


# -- the curve ---------------------------------------------------------------------------------


@examples(200)  # scikit-learn's fit per example: cheap at 60 points
@given(
    st.lists(
        st.tuples(st.floats(0, 1), st.floats(0.1, 5)),
        min_size=1,
        max_size=60,
    )
)
def test_isotonic_is_scikit_learns(points):
    from sklearn.isotonic import IsotonicRegression

    values = [v for v, _ in points]
    weights = [w for _, w in points]
    x = np.arange(len(values), dtype=float)
    ref = IsotonicRegression().fit(x, values, sample_weight=weights).predict(x)
    assert isotonic(values, weights) == pytest.approx(list(ref), abs=1e-9)


@examples(300)  # a pure function of up to 300 pairs: cheap
@given(st.lists(st.tuples(st.floats(0, 1), st.booleans()), min_size=0, max_size=300))
def test_curve_rises_pools_and_counts_every_prediction(pairs):
    curve = fit_curve(pairs)
    if len(pairs) < MIN_BUCKET:
        assert curve is None
        return
    assert curve is not None
    assert curve.predictions == len(pairs)
    assert sum(b.correct for b in curve.buckets) == sum(r for _, r in pairs)
    precisions = [b.precision for b in curve.buckets]
    assert precisions == sorted(precisions)
    assert all(b.proposals >= MIN_BUCKET for b in curve.buckets) or len(curve.buckets) == 1
    for b in curve.buckets:
        lo, hi = b.interval
        assert lo <= b.precision <= hi


def test_curve_smooths_a_handful_of_lucky_proposals():
    """Five right answers at the top do not make a tier of their own."""
    rnd = random.Random(3)
    pairs = [(0.5 + 0.4 * rnd.random(), rnd.random() < 0.7) for _ in range(100)]
    pairs += [(0.99, True)] * 5
    curve = fit_curve(pairs)
    assert curve is not None
    top = curve.bucket_at(0.99)
    assert top is not None and top.proposals >= MIN_BUCKET
    assert top.precision < 1.0


def test_wilson_interval():
    lo, hi = wilson(9, 10)
    assert 0.6 < lo < 0.9 < hi <= 1.0
    assert wilson(0, 0) == (0.0, 1.0)


def test_a_tampered_curve_does_not_validate():
    with pytest.raises(ValidationError):
        Bucket(low=0.5, proposals=3, correct=4)
    with pytest.raises(ValidationError):
        Curve(
            buckets=[
                Bucket(low=0.2, proposals=20, correct=18),
                Bucket(low=0.6, proposals=20, correct=5),
            ]
        )
    with pytest.raises(ValidationError):
        Bucket(low=-1, proposals=3, correct=1)


# -- tiers -------------------------------------------------------------------------------------


def _curve(*buckets: tuple[float, int, int]) -> Curve:
    """A curve of (confidence from, right, proposals) buckets."""
    return Curve(buckets=[Bucket(low=lo, correct=c, proposals=n) for lo, c, n in buckets])


def table(*buckets: tuple[float, int, int], key: str = "") -> ThresholdTable:
    curve = _curve(*buckets)
    return ThresholdTable(
        rows=[], method="stratified", folds=5, predictions=curve.predictions, curves={key: curve}
    )


CURVE = table((0.3, 30, 60), (0.6, 45, 60), (0.9, 57, 60))


def test_each_tier_and_the_floor():
    def pick(p: float, rule: TierRule = RULE):
        probs = {"bug": p, "feature": (1 - p) / 2, "docs": (1 - p) / 2}
        return choose(CURVE, probs, single=True, limit=1, rule=rule)

    six = TierRule(0.6, 0.9)  # a single-label floor of 0.6 (the general one)
    high, likely, low = pick(0.95, six), pick(0.7, six), pick(0.4, six)
    assert [(n, t.tier) for n, _, t in high.chosen] == [("bug", "high")]
    assert high.chosen[0][2].precision == pytest.approx(0.95)
    assert [(n, t.tier) for n, _, t in likely.chosen] == [("bug", "likely")]
    assert (likely.chosen[0][2].correct, likely.chosen[0][2].proposals) == (45, 60)
    # Right 5 in 10 (30 of 60) at that confidence: the history is not sure it is under the
    # floor of 6 in 10 (its interval reaches 0.60), so the best guess is still proposed.
    assert [(n, t.tier, t.precision) for n, _, t in low.chosen] == [("bug", "possible", 0.5)]
    # The recorded bounds: the lowest confidence of each tier.
    b = high.bounds[""]
    assert (b.possible, b.likely, b.high) == (0.3, 0.6, 0.9)
    # Right 20 of 60 (interval 0.24-0.44): surely under the floor, said in words.
    wrong = table((0.3, 20, 60), (0.6, 45, 60), (0.9, 57, 60))
    probs = {"bug": 0.4, "feature": 0.3, "docs": 0.3}
    for rule, floor in ((six, "6 in 10"), (RULE, "5 in 10")):
        c = choose(wrong, probs, single=True, limit=1, rule=rule)
        assert c.chosen == [] and c.abstained == "below floor"
        assert "`bug` is right 3 in 10 times" in c.reason and f"floor of {floor}" in c.reason
        assert c.bounds[""].possible == 0.6
    # The default floor of a type (`[labels] type_min_precision`, 0.5): a best guess right 5 in
    # 10 is still proposed, as "possible"; the likely tier starts where it did.
    assert RULE.floor_of(True) == 0.5 and RULE.floor_of(False) == 0.6
    assert [(n, t.tier) for n, _, t in pick(0.4).chosen] == [("bug", "possible")]
    b = pick(0.4).bounds[""]
    assert (b.possible, b.likely, b.high) == (0.3, 0.6, 0.9)
    # 24 of 60 (0.40, interval 0.30-0.51): under the floor by its point precision, but not
    # surely: proposed, its precision shown as measured.
    shaky = table((0.3, 24, 60), (0.6, 45, 60), (0.9, 57, 60))
    c = choose(shaky, probs, single=True, limit=1, rule=RULE)
    assert [(n, t.tier, t.precision) for n, _, t in c.chosen] == [("bug", "possible", 0.4)]
    # Only high confidence when asked.
    only_high = TierRule(0.6, 0.9, "high")
    assert pick(0.95, only_high).chosen and not pick(0.7, only_high).chosen
    assert pick(0.7, only_high).abstained == "tier"
    assert "[labels] propose = high" in pick(0.7, only_high).reason


def test_a_bucket_surely_under_the_floor_holds_back_the_ones_below_it():
    """Precision never falls as confidence rises: a small bucket under a large one that is surely
    under the floor is under it too, though its own interval is wide."""
    from issue_assistant.learn.tiers import under_floor

    curve = table((0.2, 6, 15), (0.35, 40, 100), (0.6, 90, 100))
    assert wilson(6, 15)[1] > 0.5 > wilson(40, 100)[1]
    assert under_floor(curve.curves[""], 0.5) == [True, True, False]
    for p in (0.25, 0.4):
        probs = {"bug": p, "feature": p * 0.9, "docs": p * 0.8}
        c = choose(curve, probs, single=True, limit=1, rule=RULE)
        assert c.chosen == [] and c.abstained == "below floor"
    # Under the lowest bucket, surely under: below the floor too (not "unmeasured").
    c = choose(curve, {"bug": 0.1, "feature": 0.05}, single=True, limit=1, rule=RULE)
    assert c.abstained == "below floor" and c.guess_info is not None
    up = choose(curve, {"bug": 0.7, "feature": 0.3}, single=True, limit=1, rule=RULE)
    assert [(n, t.tier) for n, _, t in up.chosen] == [("bug", "high")]


def test_a_frequent_label_is_judged_on_its_own_proposals_not_on_a_rare_ones():
    """Out of fold, low guesses of `question` were nearly always wrong and low guesses of `bug`
    right 6 in 10 times: together surely under the floor, so a low `bug` was held back with
    them. A label proposed `LABEL_CURVE_MIN` times or more has a curve of its own; one proposed
    less often is still judged on the top label's."""
    rng = random.Random(5)

    def guesses(name: str, n: int, low: float, high: float, right: float):
        out = []
        for _ in range(n):
            p = rng.uniform(low, high)
            rest = {o: (1 - p) / 2 for o in ("bug", "question", "docs") if o != name}
            gold = name if rng.random() < right else next(iter(rest))
            out.append(({name: p, **rest}, [gold]))
        return out

    preds = (
        guesses("bug", 100, 0.35, 0.5, 0.6)
        + guesses("bug", 100, 0.8, 0.95, 0.97)
        + guesses("question", 150, 0.35, 0.5, 0.05)
        + guesses("docs", LABEL_CURVE_MIN - 1, 0.35, 0.5, 0.6)
    )
    table = table_for(preds, single=True, limit=1)
    assert sorted(table.curves) == ["", "bug", "question"]  # docs: too few of its own
    pooled = table.model_copy(update={"curves": {"": table.curves[""]}})
    low = {"bug": 0.42, "question": 0.3, "docs": 0.28}
    assert not choose(pooled, low, single=True, limit=1, rule=RULE).chosen
    [(name, _, info)] = choose(table, low, single=True, limit=1, rule=RULE).chosen
    own = table.curves["bug"].bucket_at(0.42)
    assert name == "bug" and own is not None
    assert (info.correct, info.proposals) == (own.correct, own.proposals)  # what the comment says
    for held in ({"question": 0.42, "bug": 0.3, "docs": 0.28}, {"docs": 0.42, "bug": 0.3}):
        assert choose(table, held, single=True, limit=1, rule=RULE).abstained == "below floor"


def test_under_a_labels_own_curve_the_top_labels_answers_unless_its_own_is_surely_under():
    """A label's own curve that starts at 0.43 says nothing of a proposal at 0.3: the top
    label's curve answers there. One whose lowest bucket is surely under the floor holds the
    label back below it too (precision never rises as confidence falls)."""
    top = _curve((0.2, 30, 50), (0.5, 45, 50), (0.8, 48, 50))
    t = ThresholdTable(
        rows=[],
        method="stratified",
        folds=5,
        predictions=top.predictions,
        curves={
            "": top,
            "request": _curve((0.43, 42, 45)),
            "question": _curve((0.4, 2, 40), (0.7, 30, 40)),
        },
    )
    [(name, _, info)] = choose(
        t, {"request": 0.3, "bug": 0.2}, single=True, limit=1, rule=RULE
    ).chosen
    assert name == "request" and (info.correct, info.proposals) == (30, 50)
    [(name, _, info)] = choose(
        t, {"request": 0.6, "bug": 0.2}, single=True, limit=1, rule=RULE
    ).chosen
    assert (info.correct, info.proposals) == (42, 45)
    held = choose(t, {"question": 0.3, "bug": 0.2}, single=True, limit=1, rule=RULE)
    assert held.abstained == "below floor" and held.guess_info is not None
    assert (held.guess_info.correct, held.guess_info.proposals) == (2, 40)


@examples(200)  # a pure function of a curve of up to 300 pairs: cheap
@given(
    st.lists(st.tuples(st.floats(0, 1), st.booleans()), min_size=MIN_BUCKET, max_size=300),
    st.floats(0.05, 0.95),
)
def test_under_the_floor_only_from_below_and_only_on_sure_evidence(pairs, floor):
    from issue_assistant.learn.tiers import under_floor

    curve = fit_curve(pairs)
    assert curve is not None
    under = under_floor(curve, floor)
    # Held back from the lowest confidence up to some point, never above a proposed one.
    assert under == sorted(under, reverse=True)
    for b, u in zip(curve.buckets, under, strict=True):
        if b.interval[1] < floor:  # a bucket surely under the floor is held back
            assert u
        if b.interval[0] >= floor:  # one surely above it never is
            assert not u
    # The possible tier starts at the first bucket not held back.
    start = next((b.low for b, u in zip(curve.buckets, under, strict=True) if not u), None)
    assert TierRule(floor, 1.0, single_floor=floor).bounds(curve).possible == start


def test_a_group_that_never_reaches_half_still_proposes_where_history_says_it_is_right():
    """Per-label thresholds: an area whose probabilities stay under 0.5 but are right there."""
    area = table((0.0, 2, 200), (0.2, 16, 20), key="io")
    c = choose(area, {"io": 0.31}, single=False, limit=2, rule=RULE)
    # 16 right of 20 (0.80) is "likely" by its point precision, but the lower end of its 90%
    # interval (0.62) is what a label of an area is held to: "possible"
    assert [(n, t.tier, t.precision) for n, _, t in c.chosen] == [("io", "possible", 0.8)]
    assert c.bounds["io"].possible == 0.2 and c.bounds["io"].likely is None
    none = choose(area, {"io": 0.05}, single=False, limit=2, rule=RULE)
    assert none.chosen == [] and none.abstained == "below floor"


def test_an_area_label_is_proposed_only_on_enough_of_its_own_evidence():
    """A label's few lucky predictions do not make it proposable; its own interval decides."""
    from issue_assistant.learn.tiers import MIN_LABEL_EVIDENCE, proposed_record

    # 12 right of 15 (0.80) at 0.5 and up: fewer than MIN_LABEL_EVIDENCE predictions there
    thin = table((0.0, 2, 200), (0.5, 12, 15), key="docs")
    assert MIN_LABEL_EVIDENCE > 15
    c = choose(thin, {"docs": 0.7}, single=False, limit=2, rule=RULE)
    assert c.chosen == [] and c.abstained == "below floor"
    assert "too few earlier issues to be sure of 6 in 10" in c.reason
    # the same label by a type's rule (one label per issue, point precision) is proposed
    single = table((0.0, 2, 200), (0.5, 12, 15))
    assert choose(single, {"bug": 0.7}, single=True, limit=1, rule=RULE).chosen
    # 13 right of 20 (0.65): enough predictions, but its interval reaches down to 0.47
    shaky = table((0.0, 2, 200), (0.5, 13, 20), key="docs")
    assert choose(shaky, {"docs": 0.7}, single=False, limit=2, rule=RULE).chosen == []
    # 40 right of 40: high, and calibrate's record says where it is proposed and how right
    sure = table((0.0, 2, 200), (0.5, 40, 40), key="docs")
    c = choose(sure, {"docs": 0.7}, single=False, limit=2, rule=RULE)
    assert [(n, t.tier) for n, _, t in c.chosen] == [("docs", "high")]
    assert c.bounds["docs"].high == 0.5
    assert proposed_record(sure.curves["docs"], c.bounds["docs"].possible) == (40, 40)
    assert proposed_record(thin.curves["docs"], None) is None


def test_too_small_a_history_proposes_as_possible():
    small = table((0.3, 20, 40))  # 40 predictions: fewer than MEASURE_MIN
    assert small.predictions < MEASURE_MIN
    c = choose(small, {"bug": 0.4, "feature": 0.6}, single=True, limit=1, rule=RULE)
    assert not c.measured and [(n, t.tier, t.precision) for n, _, t in c.chosen] == [
        ("feature", "possible", None)
    ]
    assert (
        choose(small, {"bug": 0.4}, single=True, limit=1, rule=TierRule(0.6, 0.9, "high")).abstained
        == "tier"
    )


def test_in_tenths_rounds_down():
    assert [in_tenths(x) for x in (0.96, 0.9, 0.6, 0.59, 1.0)] == [9, 9, 6, 5, 10]
    # what the comment says of a proposed label: the same rounding, nothing where not measured
    assert LabelTier(tier="high", precision=0.96).tenths == 9
    assert LabelTier(tier="possible").tenths is None


# -- class-complete folds ----------------------------------------------------------------------


def late_feature(n: int) -> list:
    """`synthetic` issues where no enhancement is labelled before the second half."""
    out = []
    for i in synthetic(n):
        if i.number <= n // 2 and "enhancement" in i.labels:
            i = i.model_copy(update={"labels": ["bug", *[x for x in i.labels if x == "cli"]]})
        out.append(i)
    return out


def recording_fit(labels: LabelsConfig, seen: list):
    def fit_fold(train, classes):
        seen.append((list(train), {g: list(v) for g, v in classes.items()}))
        model = fit(train, labels, T0 + timedelta(days=365), calibrate=False, classes=classes)
        return model.predict_rows

    return fit_fold


def test_folds_never_score_a_label_the_fold_could_not_learn(monkeypatch):
    monkeypatch.setattr(folds, "TIME_ORDERED_MIN", 60)
    issues = late_feature(120)
    rows = rows_from(snap(issues), LABELS, T0 + timedelta(days=60))
    classes = {"type": ["bug", "enhancement"]}
    # Time order would fit the first fold on issues without a single enhancement.
    method, plan = folds.plan(rows, LABELS, classes)
    assert method == "stratified" and len(plan) == folds.K_LARGE
    seen: list = []
    tables = folds.out_of_fold(rows, LABELS, classes, recording_fit(LABELS, seen))
    assert len(seen) == folds.K_LARGE
    for train, asked in seen:
        assert asked == classes  # each fold learns exactly the final model's labels
        kinds = [r.labels & {"bug", "enhancement"} for r in train]
        assert sum(k == {"enhancement"} for k in kinds) >= folds.FOLD_MIN_EXAMPLES
    t = tables["type"]
    assert t.method == "stratified" and t.predictions == len(rows) and t.skipped_folds == 0


def test_time_ordered_folds_where_the_history_allows(monkeypatch):
    monkeypatch.setattr(folds, "TIME_ORDERED_MIN", 60)
    rows = rows_from(snap(synthetic(120)), LABELS, T0 + timedelta(days=60))
    method, plan = folds.plan(rows, LABELS, {"type": ["bug", "enhancement"]})
    assert method == "time-ordered"
    for train, test in plan:
        assert max(train) < min(test)  # fit on the older, score the newer


def test_a_late_area_label_is_scored_only_where_its_fold_holds_it(monkeypatch):
    monkeypatch.setattr(folds, "TIME_ORDERED_MIN", 60)
    late = 100  # no issue is labelled `docs` before #105
    issues = [
        i.model_copy(update={"labels": [*i.labels, "docs"]})
        if i.number > late and i.number % 5 == 0
        else i
        for i in synthetic(225)
    ]
    rows = rows_from(snap(issues), LABELS, T0 + timedelta(days=60))
    classes = {"type": ["bug", "enhancement"], "area": ["cli", "docs"]}
    method, plan = folds.plan(rows, LABELS, classes)
    assert method == "time-ordered"  # the late area label does not spoil the type's time order
    assert len(plan[0][0]) < late < len(plan[1][0])
    tables = folds.out_of_fold(rows, LABELS, classes, recording_fit(LABELS, []))
    area = tables["area"]
    assert area.skipped_folds == 0
    # `docs` is scored in the folds whose training part holds it, `cli` in every fold.
    assert area.curves["docs"].predictions == len(plan[1][1]) + len(plan[2][1])
    assert area.curves["cli"].predictions == sum(len(test) for _, test in plan)


def test_stratified_deal_spreads_a_rare_label():
    rows = rows_from(snap(synthetic(100)), LABELS, T0 + timedelta(days=60))
    fold = folds.stratified(rows, {"type": ["bug", "enhancement"], "area": ["cli"]})
    for k in range(folds.K):
        train = [r for r, f in zip(rows, fold, strict=True) if f != k]
        assert folds.complete(train, LABELS, "area", folds._need(rows, LABELS, "area", ["cli"]))


def test_an_issue_of_a_label_its_fold_never_saw_is_not_scored():
    issues = synthetic(80)
    # One issue of a third type: the final model learns it only when it has 5+ issues, so
    # force it with `classes`; the fold that holds it for scoring cannot know it.
    labels = LABELS.model_copy(
        update={"type": [*LABELS.type, LABELS.type[0].model_copy(update={"name": "question"})]}
    )
    issues[10] = issues[10].model_copy(update={"labels": ["question"]})
    rows = rows_from(snap(issues), labels, T0 + timedelta(days=60))
    classes = {"type": ["bug", "enhancement", "question"]}
    tables = folds.out_of_fold(rows, labels, classes, recording_fit(labels, []))
    assert tables["type"].predictions == len(rows) - 1


# -- the engine: no group off without a word --------------------------------------------------


def noisy(n: int, seed: int = 5) -> list:
    """Issues whose words say nothing of their type (nor of a kind, to the type prior): no
    confidence is right 6 in 10 times."""
    rnd = random.Random(seed)
    out = []
    for i in synthetic(n, seed):
        kind = rnd.choice(["bug", "enhancement"])
        title = " ".join(rnd.sample(NOUNS, 3))
        body = f"The {rnd.choice(NOUNS)} and the {rnd.choice(NOUNS)}."
        out.append(i.model_copy(update={"labels": [kind], "title": title, "body": body}))
    return out


def decide(issues: list, tmp_path, config: Config | None = None, labels=LABELS):
    """The `similar` engine's decision on the last of `issues`, a minute after its opening."""
    snapshot = snap(issues)
    config = config or Config()
    engine = create("similar", config, labels)
    index = open_index(snapshot, tmp_path)
    return replay(
        snapshot, issues[-1].number, index=index, labels=labels, config=config, engine=engine
    ).decision


def test_a_group_below_the_floor_says_why_in_plain_words_and_the_decision(tmp_path):
    # A model at chance between two types: right about 5 in 10 times at every confidence, so
    # surely under a floor of 7 in 10 (under one of 6 in 10 its 60 most confident predictions,
    # 30 right, cannot say so at 90%).
    config = Config.model_validate({"labels": {"type_min_precision": 0.7}})
    d = decide(noisy(170), tmp_path, config)
    outcome = d.label_groups["type"]
    assert d.label_model["type"] == "learned" and outcome.method == "stratified"
    assert d.type is None and d.tiers == {}
    # The decision keeps the technical reason; the comment's "Why" says it in plain words.
    assert outcome.abstained == "below floor" and "under the floor of 7 in 10" in outcome.reason
    assert d.summary == ""
    [type_note] = [n for n in d.why if n.startswith("type: ")]
    assert type_note.startswith("type: not proposed — the best guess `")
    assert "at this confidence on this repository's history" in type_note
    assert "too rarely to propose" in type_note and "floor" not in type_note
    assert "area: not proposed — none of the similar earlier issues has an area label." in d.why
    # Nothing is said of the groups labels.toml does not configure.
    assert not any(n.startswith(("topic", "priority")) for n in d.why)


def test_the_floor_turns_a_group_off_only_with_a_reason(tmp_path):
    config = Config.model_validate(
        {"labels": {"min_precision": 1.0, "type_min_precision": 1.0, "target_precision": 1.0}}
    )
    d = decide(noisy(170), tmp_path, config)
    assert d.type is None
    assert d.label_groups["type"].abstained == "below floor"
    text = render_comment(
        Plan.from_decision(d, repository="o/r", issue=170, reporter="u", created_at=T0)
    )
    why = text.split("<details><summary>Why</summary>")[1]
    assert "- type: not proposed — the best guess `" in why and "too rarely to propose" in why
    assert "floor" not in text.split("<!-- issue-assistant:plan")[0]


def test_small_history_is_said_once_and_proposed_as_possible(tmp_path):
    d = decide(synthetic(41), tmp_path)  # 40 labelled issues before #41
    assert d.label_model["type"] == "learned" and d.type == "bug"
    assert d.tiers["bug"].tier == "possible" and d.tiers["bug"].precision is None
    assert d.label_groups["type"].method == "not measured"
    said = [n for n in d.why if "not measured yet" in n]
    assert said == [
        "The labels were learned from 40 labelled earlier issues; how often they are right is "
        "not measured yet, so they are at most “possible”."
    ]
    text = render_comment(
        Plan.from_decision(d, repository="o/r", issue=41, reporter="u", created_at=T0)
    )
    assert "**Proposed:** `bug` (possible)\n" in text
    assert "- `bug`: possible, not measured yet.\n" in text.split("Why</summary>")[1]


def test_the_decision_records_the_thresholds_and_tier_bounds(tmp_path):
    issues = synthetic(171)
    d = decide(issues, tmp_path)
    rows = rows_from(snap(issues), LABELS, issues[-1].created_at)
    model = fit(rows, LABELS, issues[-1].created_at)
    expected = RULE.bounds(model.groups["type"].table.curves[""])
    assert d.label_groups["type"].bounds[""] == expected
    assert d.tiers["bug"].tier == "high" and d.tiers["bug"].proposals >= MIN_BUCKET
    assert "out-of-fold precision (floor 0.60, high 0.90" in d.calibration


def test_propose_high_keeps_only_high_confidence(tmp_path):
    config = Config.model_validate({"labels": {"propose": "high"}})
    d = decide(synthetic(41), tmp_path, config)  # not measured: possible at best
    assert d.type is None and d.label_groups["type"].abstained == "tier"
    assert (
        "type: not proposed — how often its guesses are right is not measured yet, and only "
        "measured labels are proposed."
    ) in d.why


def test_labels_config_keys():
    assert Config().labels.min_precision == 0.6 and Config().labels.propose == "possible"
    with pytest.raises(ValidationError, match="min_precision"):
        Config.model_validate({"labels": {"min_precision": 0.95}})
    assert Config().labels.type_min_precision == 0.5
    with pytest.raises(ValidationError, match="type_min_precision"):
        Config.model_validate({"labels": {"type_min_precision": 0.95}})
    with pytest.raises(ValidationError):
        Config.model_validate({"labels": {"propose": "sure"}})
    with pytest.raises(ValidationError):
        Config.model_validate({"labels": {"floor": 0.5}})


# -- the tier words ---------------------------------------------------------------------------


def test_the_comment_says_each_tier_in_words():
    plan = Plan(
        repository="o/r",
        issue=3,
        reporter="u",
        created_at=T0,
        type="bug",
        areas=["cli", "docs"],
        confidence={"bug": 0.97, "cli": 0.6, "docs": 0.5},
        tiers={
            "bug": LabelTier(tier="high", precision=0.96, correct=48, proposals=50),
            "cli": LabelTier(tier="likely", precision=0.8, correct=40, proposals=50),
            "docs": LabelTier(tier="possible", source="vote"),
        },
    )
    text = render_comment(plan)
    # Above the fold: the words only; the measured precision behind each is in "Why".
    visible, why = text.split("<details><summary>Why</summary>")
    assert "**Proposed:** `bug` (very likely) · `cli` (likely) · `docs` (possible)\n" in visible
    assert "in 10" not in visible
    assert (
        "- `bug`: very likely, right 9 in 10 times at this confidence on this "
        "repository's history (48 of 50).\n"
    ) in why
    assert "- `cli`: likely, right 8 in 10 times at this confidence" in why
    assert (
        "- `docs`: possible, from the labels of the most similar earlier issues (not measured)"
    ) in why
    every = plan.model_copy(
        update={"tiers": {"bug": LabelTier(tier="high", precision=1.0, correct=67, proposals=67)}}
    )
    assert "- `bug`: very likely, right every time at this confidence on this repository's " in (
        render_comment(every)
    )
    # The tier is in the plan marker, so approval and re-rendering keep it.
    from issue_assistant.comment import extract_plan

    again = extract_plan(text)
    assert again is not None and again.tiers == plan.tiers


# -- calibration.json and the artifact: validated on load -------------------------------------


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """calibration.json written by `calibrate --json` on a small snapshot, and what it printed."""
    import contextlib
    import io

    from issue_assistant.cli import main
    from issue_assistant.tracker.snapshot import write_snapshot

    tmp_path = tmp_path_factory.mktemp("calibrated")
    issues = synthetic(170)
    path = tmp_path / "s.jsonl"
    write_snapshot(path, snap(issues).repository, issues)
    labels = tmp_path / "labels.toml"
    labels.write_text(
        '[[type]]\nname = "bug"\n[[type]]\nname = "enhancement"\n[[area]]\nname = "cli"\n'
    )
    cache = tmp_path / "cache"
    args = [
        "calibrate",
        "--snapshot",
        str(path),
        "--labels",
        str(labels),
        "--cache-dir",
        str(cache),
    ]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main([*args, "--json"]) == 0
    (file,) = cache.glob("index/*/calibration.json")
    return file.read_text(), out.getvalue()


def calibrated(tmp_path, written):
    """A copy of the written calibration.json in `tmp_path`, and its data."""
    import json

    file = tmp_path / "calibration.json"
    file.write_text(written[0])
    return file, json.loads(written[0])


def test_calibrate_records_the_thresholds_and_tier_bounds(tmp_path, written):
    _, data = calibrated(tmp_path, written)
    assert '"bounds"' in written[1]
    t = data["labels"]["type"]
    assert t["measured"] and t["method"] == "stratified"
    assert t["threshold"] == t["bounds"][""]["possible"] is not None
    assert data["min_precision"] == 0.6 and data["propose"] == "possible"
    assert t["table"]["curves"][""]["buckets"]
    # each type proposed often enough out of fold has a curve of its own, and its bounds
    assert set(t["table"]["curves"]) == set(t["bounds"]) == {"", "bug", "enhancement"}


TAMPERED = [
    ("threshold -1", lambda d: d["labels"]["type"].update(threshold=-1)),
    ("an unknown key", lambda d: d["labels"]["type"].update(surprise=1)),
    ("a group that is not one", lambda d: d["labels"].update(colour=d["labels"]["type"])),
    (
        "more right than proposed",
        lambda d: d["labels"]["type"]["table"]["curves"][""]["buckets"][0].update(correct=10**6),
    ),
    ("labels not an object", lambda d: d.update(labels=[1, 2])),
]


@pytest.mark.parametrize("what,tamper", TAMPERED, ids=[t[0] for t in TAMPERED])
def test_a_tampered_labels_part_is_ignored_in_one_line(tmp_path, caplog, written, what, tamper):
    import json

    from issue_assistant.learn.calibration_file import read_calibration

    file, data = calibrated(tmp_path, written)
    tamper(data)
    file.write_text(json.dumps(data))
    caplog.clear()
    cal = read_calibration(file.parent)
    assert cal is not None and cal.labels == {}
    assert cal.duplicates is not None  # the other part still holds
    (record,) = [r for r in caplog.records if r.levelname == "WARNING"]
    assert "labels part ignored" in record.getMessage() and "\n" not in record.getMessage()


def test_a_labels_part_of_other_data_or_a_broken_file_is_not_trusted(tmp_path, caplog, written):
    from issue_assistant.learn.calibration_file import read_calibration

    file, data = calibrated(tmp_path, written)
    assert read_calibration(file.parent, data["fingerprint"]).labels
    caplog.clear()
    assert read_calibration(file.parent, "0" * 16).labels == {}
    assert "fit on data" in caplog.text
    for broken in ('{"labels": ', "[" * 100_000, "null", '{"repository": 1}'):
        file.write_text(broken)
        caplog.clear()
        assert read_calibration(file.parent) is None
        assert len([r for r in caplog.records if r.levelname == "WARNING"]) == 1


def test_a_tampered_curve_in_the_label_model_is_refit_not_trusted(tmp_path, caplog):
    import json

    from issue_assistant.learn import store

    issues = synthetic(100)
    snapshot = snap(issues)
    index = open_index(snapshot, tmp_path)
    moment = issues[80].created_at
    store.refit(AsOfView(snapshot, moment), index, LABELS, moment, replay=True)
    path = store.model_path(index.path)
    with np.load(path, allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files}
    meta = json.loads(arrays["meta"].tobytes().decode())
    (typ,) = [g for g in meta["groups"] if g["group"] == "type"]
    typ["table"]["curves"][""]["buckets"][0]["correct"] = -5
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    with path.open("wb") as fh:
        np.savez(fh, **arrays)
    caplog.clear()
    assert store.load_model(index.path, store.labels_key(LABELS)) is None
    assert "refitting" in caplog.text and len(caplog.records) == 1


def test_the_why_notes_name_every_group_and_stay_bounded():
    """Four groups abstaining with long label names: every group still gets its note, and the
    notes a decision keeps are bounded in count and length."""
    from issue_assistant.decision import WHY_MAX, WHY_NOTES, Decision, GroupOutcome
    from issue_assistant.engines.similar_labels import LabelAnswer, plain_reason, why_notes
    from issue_assistant.learn.tiers import Choice

    long = {
        g: [{"name": f"{g}: a rather long label name number {i}xxxxx"} for i in range(3)]
        for g in ("type", "area", "topic", "priority")
    }
    labels = LabelsConfig.model_validate(long)
    info = LabelTier(tier="possible", precision=0.3, correct=3, proposals=10)
    answer = LabelAnswer(
        modes={g: "learned" for g in long},
        groups={g: GroupOutcome(mode="learned", abstained="below floor") for g in long},
        plain={
            g: plain_reason(
                Choice(abstained="below floor", guess=long[g][0]["name"], guess_info=info)
            )
            for g in long
        },
    )
    notes = why_notes(answer, labels, None)
    assert len(notes) == 4 <= WHY_NOTES
    for group, note in zip(long, notes, strict=True):
        assert note.startswith(f"{group}: not proposed — the best guess `{group}: a rather")
        assert "right only 3 in 10 times" in note
    kept = Decision(why=notes * 5).why
    assert len(kept) == WHY_NOTES and all(len(n) <= WHY_MAX for n in kept)


def test_not_measured_yet_is_said_only_of_groups_that_propose():
    """hf-datasets #6900: type measured and proposed, topic learned but not measured and
    proposing nothing. "not measured yet" explains why a proposal is at most "possible": it is
    not said of a group that proposes nothing, nor of one the issue's labels already fill."""
    from issue_assistant.decision import GroupOutcome
    from issue_assistant.engines.similar_labels import LabelAnswer, why_notes

    labels = LabelsConfig.model_validate(
        {g: [{"name": f"{g}-a"}, {"name": f"{g}-b"}] for g in ("type", "topic")}
    )

    def notes(proposed: dict, unmeasured: dict, filled: frozenset = frozenset()) -> list[str]:
        answer = LabelAnswer(
            proposed=proposed,
            modes={"type": "learned", "topic": "learned"},
            groups={g: GroupOutcome(mode="learned") for g in ("type", "topic")},
            unmeasured=unmeasured,
            plain={"topic": "no label stands out"},
        )
        return why_notes(answer, labels, 1500, filled)

    quiet = notes({"type": ["type-a"]}, {"topic": 1500})
    assert quiet == [
        "topic: not proposed — no label stands out.",
        "The labels were learned from 1,500 labelled earlier issues.",
    ]
    said = notes({"type": ["type-a"], "topic": ["topic-b"]}, {"topic": 1500})
    assert said[-1] == (
        "topic: learned from 1,500 labelled issues, not measured yet, so at most “possible”."
    )
    both = notes({"type": ["type-a"]}, {"type": 1500, "topic": 1500})
    assert both[-1].endswith("; how often they are right is not measured yet, so they are at "
                             "most “possible”.")  # fmt: skip
    assert notes({"type": ["type-a"]}, {"type": 1500}, frozenset({"type"})) == [
        "topic: not proposed — no label stands out.",
        "The labels were learned from 1,500 labelled earlier issues.",
    ]


def test_a_guess_never_right_at_its_confidence_says_never():
    """0 of 595 read "rarely right ... too rarely to propose" in the golden comment."""
    from issue_assistant.engines.similar_labels import plain_reason
    from issue_assistant.learn.tiers import Choice

    def reason(correct: int, proposals: int) -> str:
        info = LabelTier(
            tier="possible", precision=correct / proposals, correct=correct, proposals=proposals
        )
        return plain_reason(Choice(abstained="below floor", guess="docs", guess_info=info))

    assert reason(0, 595) == (
        "the best guess `docs` was never right at this confidence on this repository's "
        "history (0 of 595)"
    )
    assert "rarely right" in reason(10, 163) and reason(10, 163).endswith("too rarely to propose")
    assert "right only 4 in 10 times" in reason(4, 10)
    assert reason(3, 12_345).endswith("history (3 of 12,345), too rarely to propose")


def _calibrate_text(group: str, curves: dict[str, Curve], rows=(), **more) -> str:  # noqa: ANN001, ANN003
    """calibrate's text for one learned, measured group with these out-of-fold curves (and
    these rows of its table by threshold)."""
    from datetime import UTC, datetime

    from issue_assistant.learn.calibration_file import CalibrationFile, GroupCalibration
    from issue_assistant.learn.tiers import MIN_LABEL_EVIDENCE, proposed_record
    from issue_assistant.render import render

    n = sum(b.proposals for b in next(iter(curves.values())).buckets)
    single = "" in curves
    table = ThresholdTable(
        rows=list(rows), method="stratified", folds=5, predictions=n, curves=curves
    )
    calibration = GroupCalibration(
        model="learned",
        issues=n,
        method="stratified",
        measured=True,
        bounds={k: RULE.bounds(c, per_label=not single) for k, c in curves.items()},
        table=table,
        **more,
    )
    cal = CalibrationFile(
        repository="o/r",
        cutoff=datetime(2024, 1, 1, tzinfo=UTC),
        fingerprint="0123456789abcdef",
        labelled_issues=n,
        target_precision=0.9,
        labels={group: calibration},
    )
    return render(
        "calibrate.txt.j2",
        cal=cal,
        rule=RULE,
        measure_min=MEASURE_MIN,
        min_evidence=MIN_LABEL_EVIDENCE,
        record=proposed_record,
        min_positives=20,
        min_pairs=10,
        source="snapshot s.jsonl",
        path="calibration.json",
        seconds=1.0,
    )


def test_calibrate_prints_each_area_labels_precision_where_it_is_proposed():
    """calibrate's text for a multi-label group: each label's out-of-fold precision where the
    per-label rule proposes it, and "never proposed" where it does not."""
    from issue_assistant.learn.tiers import MIN_LABEL_EVIDENCE

    sure = _curve((0.0, 2, 200), (0.4, 38, 40))
    lucky = _curve((0.0, 2, 225), (0.5, 9, 15))
    text = _calibrate_text("area", {"cli": sure, "docs": lucky})
    assert "  cli: precision 0.95 (38/40) where proposed; possible from 0.40" in text
    assert "  docs: never proposed; possible from –" in text
    assert f"on at least {MIN_LABEL_EVIDENCE} out-of-fold predictions" in text


def test_calibrate_prints_a_type_labels_own_curve_beside_the_top_labels():
    """calibrate's text for a single-label group: the top label's curve, then each label's own
    (what its proposals are held to, `tiers.choose`)."""
    top = _curve((0.2, 20, 60), (0.6, 57, 60))
    bug = _curve((0.3, 30, 40), (0.6, 39, 40))
    text = _calibrate_text("type", {"": top, "bug": bug}, threshold=0.2)
    assert (
        "  curve (confidence from: precision [90% interval] (right/proposals)): 0.2: 0.33" in text
    )
    assert (
        "  bug, on its own 80 proposals (what its proposals are held to): possible from 0.30"
        in text
    )
    assert "    curve: 0.3: 0.75" in text


def test_calibrate_reads_thresholds_where_nothing_changes_as_one_line():
    """poetry-sample's type table was 16 lines of the same figures (0.20 to 0.95) and its
    duplicate table 28 lines of zeros: consecutive thresholds that read the same are one line
    with their range; a change starts a new one."""
    from issue_assistant.learn.confidence import ThresholdRow
    from issue_assistant.render import runs

    def row(threshold: float, proposals: int, correct: int) -> ThresholdRow:
        return ThresholdRow(
            threshold=threshold,
            issues=100,
            covered=proposals,
            proposals=proposals,
            correct=correct,
            gold=100,
        )

    rows = [row(0.2, 100, 80), row(0.25, 100, 80), row(0.3, 100, 80), row(0.35, 90, 78)]
    rows += [row(0.4, 60, 58), row(0.45, 60, 58)]
    top = _curve((0.2, 20, 60), (0.6, 57, 60))
    text = _calibrate_text("type", {"": top}, rows=rows, threshold=0.2)
    table = text.split("confidence  coverage  precision  recall  proposals\n", 1)[1]
    assert table.splitlines()[:3] == [
        "  0.20-0.30   1.00      0.80       0.80    100",
        "  0.35        0.90      0.87       0.78    90",
        "  0.40-0.45   0.60      0.97       0.58    60",
    ]
    got = runs(rows, "proposals", "correct")
    assert [(lo, hi, r.proposals) for lo, hi, r in got] == [
        (0.2, 0.3, 100),
        (0.35, 0.35, 90),
        (0.4, 0.45, 60),
    ]
    assert runs([], "proposals") == []


def test_a_voted_group_says_why_once_and_not_where_the_issue_answers_it():
    """poetry #10120 (88 labelled issues, every group voted): its template set `kind/bug`, yet
    "Why" said "type: from the labels of the most similar earlier issues (too little history to
    learn this group)", and the same of area beside `area/docs`'s own line saying where it came
    from. A voted group now says only why it voted, and not where the issue's labels answer it,
    nor where the configuration asks for the vote."""
    from issue_assistant.decision import GroupOutcome
    from issue_assistant.engines.similar_labels import LabelAnswer, why_notes

    labels = LabelsConfig.model_validate(
        {g: [{"name": f"{g}-a"}, {"name": f"{g}-b"}] for g in ("type", "area")}
    )

    def notes(unlearned: set[str], filled: frozenset = frozenset()) -> list[str]:
        answer = LabelAnswer(
            proposed={"type": ["type-a"], "area": ["area-b"]},
            modes={"type": "vote", "area": "vote"},
            groups={g: GroupOutcome(mode="vote") for g in ("type", "area")},
            unlearned=unlearned,
        )
        return why_notes(answer, labels, None, filled)

    both = {"type", "area"}
    assert notes(both) == [
        "type: too few labelled earlier issues to learn it from yet.",
        "area: too few labelled earlier issues to learn it from yet.",
    ]
    assert notes(both, frozenset({"type"})) == [
        "area: too few labelled earlier issues to learn it from yet."
    ]
    assert notes(set()) == []  # `[labels] model = "vote"`: the maintainer's choice


def test_a_real_issue_with_its_type_from_a_template_explains_only_the_rest(poetry_index):
    from tests.golden_comments import DATA, POETRY_LABELS, _replay

    analysis = _replay(DATA / "poetry-sample.jsonl.gz", POETRY_LABELS, 10120, poetry_index)
    why = analysis.decision.why
    assert analysis.decision.areas == ["area/docs"]
    assert "area: too few labelled earlier issues to learn it from yet." in why
    assert not [line for line in why if line.startswith("type:")], why
    assert "`kind/bug` came with the issue" in analysis.comment
