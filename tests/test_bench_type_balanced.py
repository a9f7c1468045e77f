"""bench/type_balanced.py: every kind of a task is scored, as often as each kind trains, and no
scored issue is a training one (a scarce third kind once trained on all its issues and was never
scored)."""

from __future__ import annotations

from collections import Counter

import pytest

from bench.type_balanced import TASKS, draws


@pytest.mark.parametrize("task", TASKS, ids=[t[0] for t in TASKS])
def test_each_kind_trains_and_is_scored_in_an_even_share(task):
    _, kinds, per_kind = task
    names = {k[0] for k in kinds}
    for train, test, gold in draws(kinds, per_kind, 2):
        trained = Counter(next(iter(r.labels)) for r in train)
        assert set(trained) == names and len(set(trained.values())) == 1
        assert Counter(gold) == trained
        assert [next(iter(r.labels)) for r in test] == gold
        assert 0 < trained.most_common(1)[0][1] <= per_kind
        assert not {r.number for r in train} & {r.number for r in test}
