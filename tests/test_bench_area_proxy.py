"""bench/area_proxy.py: the scored issues are answered between refits as the engine's rule
(`learn.saved.stale`) would refit, each block by a model of what came before it."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta

from bench.area_proxy import blocks, merged
from bench.section_labels import MultiScore
from issue_assistant.learn.rows import Row
from issue_assistant.learn.saved import REFIT_COUNT, REFIT_SHARE

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def _rows(n: int) -> list[Row]:
    return [Row(i, T0 + timedelta(hours=i), f"title {i}", "", frozenset({"a"})) for i in range(n)]


def test_blocks_refit_every_tenth_of_a_small_history_and_every_fifty_of_a_large_one():
    rows = _rows(1_000)
    test = rows[600:1_000]
    small = blocks(rows, test, 300)
    assert [len(part) for _, part in small] == [30] * 13 + [10]
    assert REFIT_SHARE * 300 == 30
    large = blocks(rows, test, None)
    assert [len(part) for _, part in large] == [REFIT_COUNT] * 8
    for got in (small, large):
        assert [r for _, part in got for r in part] == test
        for train, part in got:
            # learned only from what was created before the block's first issue
            assert train and max(r.created_at for r in train) < part[0].created_at
            assert train[-1] is rows[rows.index(part[0]) - 1]
    assert all(len(train) == 300 for train, _ in small)
    assert [len(train) for train, _ in large] == [600 + 50 * k for k in range(8)]


def test_merged_adds_the_blocks_counts():
    one, two = MultiScore(10), MultiScore(5)
    one.covered, one.made, one.right, one.given, one.reachable = 4, 6, 5, 9, 2
    two.covered, two.made, two.right, two.given, two.reachable = 1, 2, 1, 3, 3
    one.by_tier["high"], two.by_tier["high"] = 3, 2
    one.label_made["a"], two.label_made["a"] = 4, 1
    s = merged([one, two])
    assert (s.scored, s.covered, s.made, s.right, s.given) == (15, 5, 8, 6, 12)
    assert s.reachable == 3
    assert s.by_tier == Counter({"high": 5}) and s.label_made == Counter({"a": 5})
