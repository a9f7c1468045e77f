"""What a single-label group proposes from: the model, the vote of the most similar training
issues or a blend, chosen on out-of-fold evidence at fit time (`learn/neighbours.py`)."""

from __future__ import annotations

import random
from datetime import timedelta

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from issue_assistant.config.sections import Config
from issue_assistant.engines import create
from issue_assistant.index.local import open_index
from issue_assistant.learn import artifact, folds, neighbours, store, type_prior
from issue_assistant.learn.model import fit
from issue_assistant.learn.neighbours import macro_f1, surely_better
from issue_assistant.learn.rows import rows_from
from issue_assistant.pipeline import replay
from issue_assistant.tracker.asof import AsOfView
from issue_assistant.tracker.models import Issue
from tests.test_learn import LABELS, hourly, snap
from tests.test_learn_cues import hf, needs_data  # noqa: F401 - fixture


def pairs(n: int, seed: int = 3) -> list[Issue]:
    """The type is the XOR of two words (a bug with red and cat, or blue and dog; else an
    enhancement), apart among a few common words: no weight on a word or a pair of neighbouring
    words tells the types apart, while the most similar earlier issues share both words."""
    rnd = random.Random(seed)
    common = ["sun", "moon", "tree", "lake", "hill", "rock"]
    out = []
    for k in range(1, n + 1):
        a, b = rnd.choice(["red", "blue"]), rnd.choice(["cat", "dog"])
        kind = "bug" if (a == "red") == (b == "cat") else "enhancement"
        f = rnd.sample(common, 3)
        body = f"{a} {a} {a} {f[1]} {f[2]} {b} {b} {b}"
        out.append(hourly(k, f"{a} {f[0]} {b}", body, [kind]))
    return out


def topics(n: int, seed: int = 4) -> list[Issue]:
    """The type is told by one of many words per type, each rare; the text is mostly the words of
    one of a few topics shared by both types: the most similar issues are of the same topic, any
    type, while a weight per word learns the type."""
    rnd = random.Random(seed)
    bug = [f"bug{i}" for i in range(12)]
    feat = [f"feat{i}" for i in range(12)]
    subjects = [[f"t{t}x{i}" for i in range(10)] for t in range(8)]
    out = []
    for k in range(1, n + 1):
        kind = "bug" if k % 2 else "enhancement"
        words = bug if kind == "bug" else feat
        topic = rnd.choice(subjects)
        title = f"{rnd.choice(words)} {' '.join(rnd.sample(topic, 4))}"
        body = " ".join(topic + rnd.sample(topic, 6)) + f" {rnd.choice(words)}"
        out.append(hourly(k, title, body, [kind]))
    return out


def _fit(issues: list[Issue]):  # noqa: ANN202
    cutoff = issues[-1].created_at + timedelta(hours=1)
    return fit(rows_from(snap(issues), LABELS, cutoff), LABELS, cutoff)


def test_a_history_where_the_vote_is_better_out_of_fold_proposes_from_the_vote():
    model = _fit(pairs(240))
    gm = model.groups["type"]
    assert gm.mode == "learned"
    assert gm.sources["vote"] > gm.sources["model"] + 0.2, gm.sources
    assert gm.source == "vote"
    assert "the vote" in gm.reason and model.neighbours is not None
    # What is proposed is the vote's: right on new issues the model alone gets wrong.
    new = pairs(400, seed=9)[240:]
    probs = model.probabilities_many([(i.title, i.body or "") for i in new])
    right = np.mean(
        [max(p["type"], key=p["type"].get) == i.labels[0] for p, i in zip(probs, new, strict=True)]
    )
    assert right > 0.85
    # The tiers are measured on the vote's out-of-fold predictions: its table, not the model's.
    assert gm.table is not None and gm.table.predictions >= 200
    high = gm.table.curves[""].buckets[-1]
    assert high.precision > 0.85


def test_a_history_where_the_model_is_better_out_of_fold_keeps_the_model():
    model = _fit(topics(300))
    gm = model.groups["type"]
    assert gm.sources["model"] > gm.sources["vote"] + 0.1, gm.sources
    assert gm.source == "model"
    assert model.neighbours is None  # nothing kept that is not used
    assert "the vote" not in gm.reason


def test_the_choice_and_the_vote_rows_are_saved_and_loaded_with_the_model(tmp_path):
    model = _fit(pairs(200))
    assert model.groups["type"].source == "vote"
    path = store.save_model(model, tmp_path, "key")
    _, loaded = artifact.read(path)
    assert loaded is not None
    assert loaded.groups["type"].source == "vote"
    assert loaded.groups["type"].sources == model.groups["type"].sources
    new = pairs(260, seed=7)[200:]
    docs = [(i.title, i.body or "") for i in new]
    got, want = loaded.probabilities_many(docs), model.probabilities_many(docs)
    for a, b in zip(got, want, strict=True):
        assert a["type"].keys() == b["type"].keys()
        assert all(abs(a["type"][k] - b["type"][k]) < 1e-5 for k in a["type"])
    # The rows of the vote are checked like the rest: a group proposing from the vote needs them.
    model.neighbours = None
    bad = store.save_model(model, tmp_path / "bad", "key")
    with pytest.raises(artifact.InvalidArtifact, match="proposes from the vote without its rows"):
        artifact.read(bad)


def test_a_model_source_saves_no_vote_rows(tmp_path):
    model = _fit(topics(200))
    assert model.groups["type"].source == "model"
    path = store.save_model(model, tmp_path, "key")
    assert "neighbours_data" not in np.load(path).files
    _, loaded = artifact.read(path)
    assert loaded is not None and loaded.neighbours is None


def test_evaluate_bucket_models_make_the_same_choice(tmp_path):
    issues = pairs(260)
    snapshot = snap(issues)
    cutoffs = [issues[k].created_at for k in (200, 230)]
    source = store.BucketSource(snapshot, LABELS, cutoffs, ahead=False)
    index = open_index(snapshot, tmp_path)
    for k, cutoff in zip((200, 230), cutoffs, strict=True):
        bucket = source.model_for(snapshot, index, LABELS, issues[k].created_at)
        alone = fit(rows_from(AsOfView(snapshot, cutoff), LABELS, cutoff), LABELS, cutoff)
        assert bucket.groups["type"].source == alone.groups["type"].source == "vote"
        # (the type prior's out-of-fold score may move by an issue: a tie flips with the warm
        # start of evaluate's fits)
        got, want = bucket.groups["type"].sources, alone.groups["type"].sources
        assert got.keys() == want.keys() and got == pytest.approx(want, abs=0.01)


def test_the_engine_proposes_from_the_vote_at_its_measured_tier(tmp_path):
    issues = pairs(260)
    snapshot = snap(issues)
    index = open_index(snapshot, tmp_path)
    config = Config()
    engine = create("similar", config, LABELS)
    right = 0
    for target in issues[-10:]:
        decision = replay(
            snapshot, target.number, index=index, labels=LABELS, config=config, engine=engine
        ).decision
        right += decision.type == target.labels[0]
        if decision.type:
            tier = decision.tiers[decision.type]
            assert tier.source != "vote" and tier.proposals  # measured, not the unlearned vote
    assert right >= 8


@given(
    st.lists(st.sampled_from([0.0, -0.0, 0.1, 0.25, 0.5, 1.0]) | st.floats(0, 1), max_size=60),
    st.integers(1, 15),
)
def test_the_vote_takes_the_k_most_similar_as_a_full_sort_would(sims, k):
    """The vote's neighbours, found without sorting every training issue: the same positions in
    the same order as a stable sort of all of them (ties by position)."""
    from issue_assistant.learn.neighbours import _top

    x = np.asarray(sims, dtype=np.float64)
    assert _top(x, k).tolist() == np.argsort(-x, kind="stable")[:k].tolist()


def _preds(tops: list[str], golds: list[str]) -> list[tuple[dict[str, float], list[str]]]:
    return [({t: 0.9, "other": 0.05}, [g]) for t, g in zip(tops, golds, strict=True)]


def test_a_challenger_right_where_the_default_is_wrong_is_surely_better():
    gold = ["bug"] * 100 + ["enhancement"] * 80 + ["question"] * 20
    default = _preds(["bug"] * 160 + ["enhancement"] * 40, gold)
    challenger = _preds(gold[:150] + ["bug"] * 10 + gold[160:], gold)
    names = ["bug", "enhancement", "question"]
    assert macro_f1(challenger, names) > macro_f1(default, names) + 0.2
    assert surely_better(challenger, default, names)
    assert not surely_better(default, challenger, names)
    assert not surely_better(default, default, names)


def test_a_few_rare_issues_right_by_luck_are_not_surely_better():
    """Two more of five rare issues right lifts macro F1 by more than the fixed 0.02 margin the
    choice used before; the paired resamples see that it rests on two issues."""
    gold = ["bug"] * 120 + ["enhancement"] * 75 + ["question"] * 5
    names = ["bug", "enhancement", "question"]
    base = gold[:195] + ["bug"] * 4 + ["question"]
    lucky = gold[:195] + ["bug"] * 2 + ["question"] * 3
    default, challenger = _preds(base, gold), _preds(lucky, gold)
    assert macro_f1(challenger, names) > macro_f1(default, names) + 0.02
    assert not surely_better(challenger, default, names)


def test_paired_predictions_of_different_lengths_are_an_error():
    one = _preds(["bug"], ["bug"])
    with pytest.raises(ValueError, match="paired predictions differ in length: 1 against 2"):
        surely_better(one, one * 2, ["bug"])


@pytest.fixture(scope="module")
def held_out_prior():
    from bench.fit_type_prior import fit as fit_prior

    return fit_prior(["poetry-sample"])


@needs_data
@pytest.mark.parametrize("setting", ["oldest 100", "300 before the scored"])
def test_the_choices_hold_still_under_the_fold_shuffle(hf, held_out_prior, setting, monkeypatch):  # noqa: F811
    """On hf-datasets' histories where a fixed margin flipped them with the shuffle (the oldest
    100: the vote or the prior dropped at some seeds; the 300 before: the blend at one), the
    prior is kept under every seed, and the source is the model: under every seed with the
    oldest 100; with the 300 before, at all but one (there the blend and the vote are within
    0.05 of the model out of fold, and one shuffle of five finds the blend surely better)."""
    labels, rows = hf
    if setting == "oldest 100":
        train, cutoff = [r for r, _ in rows[:100]], rows[100][0].created_at
    else:
        scored = [r for r, t in rows if t][-200:]
        cutoff = scored[0].created_at
        train = [r for r, _ in rows if r.created_at < cutoff][-300:]
    monkeypatch.setattr(type_prior, "load_prior", lambda path=None: held_out_prior)
    chosen = []
    for seed in range(5):
        monkeypatch.setattr(folds, "SEED", seed)
        gm = fit(train, labels, cutoff).groups["type"]
        assert gm.table is not None and gm.table.method == "stratified"
        chosen.append((gm.source, gm.prior_weight > 0))
    assert all(kept for _, kept in chosen)
    models = sum(source == "model" for source, _ in chosen)
    assert models == 5 if setting == "oldest 100" else models >= 4


@given(
    st.lists(
        st.tuples(st.sampled_from(["a", "b", "c", None]), st.sampled_from(["a", "b", "c", "d"])),
        min_size=1,
        max_size=40,
    )
)
def test_the_paired_test_counts_macro_f1_as_the_choice_reports_it(pairs_):
    preds = [({top: 1.0} if top else {}, [gold]) for top, gold in pairs_]
    names = ["a", "b", "c"]
    got = neighbours._macro_f1s(neighbours._outcomes(preds, names), np.ones((1, len(preds))))
    assert got[0] == pytest.approx(macro_f1(preds, names), abs=1e-6)
    # Nothing is surely better than itself.
    assert not surely_better(preds, preds, names)
