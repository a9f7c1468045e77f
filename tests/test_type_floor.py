"""The type floor on real history holds still when the folds are dealt differently
(`learn/tiers.py`'s `under_floor`): hf-datasets' oldest 300 labelled issues, scored on the next
200 typed ones, under several shuffles of the stratified folds, with the type prior held out
(fit on poetry-sample alone, as the labels section measures it)."""

from __future__ import annotations

import pytest

from issue_assistant.config.sections import LabelModelConfig
from issue_assistant.learn import folds, type_prior
from issue_assistant.learn.model import fit
from issue_assistant.learn.tiers import TierRule, choose
from tests.test_learn_cues import hf, needs_data, oldest  # noqa: F401 - fixtures

RULE = TierRule.of(LabelModelConfig())


@pytest.fixture(scope="module")
def held_out():
    from bench.fit_type_prior import fit as fit_prior

    return fit_prior(["poetry-sample"])


@needs_data
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_type_floor_does_not_flip_with_the_fold_shuffle(oldest, held_out, seed, monkeypatch):  # noqa: F811
    labels, train, scored = oldest
    monkeypatch.setattr(folds, "SEED", seed)
    monkeypatch.setattr(type_prior, "load_prior", lambda path=None: held_out)
    model = fit(train, labels, scored[0][0].created_at)
    gm = model.groups["type"]
    assert gm.table is not None and gm.table.method == "stratified"
    probs = [p.get("type", {}) for p in model.probabilities_many([r.doc for r, _ in scored])]
    chosen = [choose(gm.table, p, single=True, limit=1, rule=RULE) for p in probs]
    proposed = [(c.chosen[0][0], t) for c, (_, t) in zip(chosen, scored, strict=True) if c.chosen]
    # Dealt by these seeds, the floor by point precision abstained on 0.08, 0.17 and 0.13 of
    # these issues (`bench/floor_seeds.py`); the history is sure of none of it. Judged on the
    # top label's curve alone it held back 0.075 under seed 1 (since the title weighs 0.6: 31
    # of 79 out-of-fold proposals of every label right at confidence 0.25-0.55); on each
    # frequent label's own curve, 0.02.
    assert len(proposed) >= 0.95 * len(scored)
    assert sum(a == t for a, t in proposed) >= 0.85 * len(proposed)
    # What the floor still holds back is what the history was sure of: under 5 in 10.
    for c in chosen:
        if not c.chosen:
            assert c.abstained == "below floor" and c.guess_info is not None
            assert (c.guess_info.upper or 1.0) < 0.7
