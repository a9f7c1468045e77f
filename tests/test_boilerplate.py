"""Boilerplate lines: learned from the index, leak-free, and kept out of the duplicate score."""

from __future__ import annotations

from datetime import timedelta

from issue_assistant.index import duplicates
from issue_assistant.index.boilerplate import FILE, MIN_ISSUES, Boilerplate
from issue_assistant.index.candidates import Candidate
from issue_assistant.tracker.models import Repository
from issue_assistant.tracker.snapshot import Snapshot
from tests.test_retrieval import T0, context_for, index_of, issue

TEMPLATE = (
    "## Adding a Dataset\n"
    "- **Name:** *name of the dataset*\n"
    "- **Description:** *short description of the dataset (or link to a blog post)*\n"
    "- **Paper:** *link to the dataset paper if available*\n"
    "- **Motivation:** *what are some good reasons to have this dataset*"
)


def test_a_line_is_boilerplate_only_from_the_moment_it_became_common():
    bodies = [(T0 + timedelta(hours=k), f"{TEMPLATE}\nmy own line number {k}") for k in range(15)]
    found = Boilerplate.build(bodies)
    line = "- **Name:** *name of the dataset*"
    became = T0 + timedelta(hours=MIN_ISSUES - 1)  # the 10th issue carrying it
    assert found.is_common(line, became + timedelta(seconds=1))
    assert not found.is_common(line, became)  # a replay before then does not see it
    assert not found.is_common("my own line number 3", None)  # one issue's own line
    kept = found.strip(f"{TEMPLATE}\nthe loader crashes", became + timedelta(hours=1))
    assert kept.strip().endswith("the loader crashes") and "Paper" not in kept


def test_boilerplate_round_trips_and_rebuilds_when_the_index_grew(tmp_path):
    many = [issue(n, f"Dataset {n} request", TEMPLATE) for n in range(1, 21)]
    index = index_of(tmp_path, many)
    first = index.boilerplate()
    assert first.indexed == 20 and len(first.common) >= 4
    assert (index.path / FILE).is_file()
    assert Boilerplate.load(index.path) == first
    index.update([issue(n, f"Dataset {n} request", TEMPLATE) for n in range(21, 23)])
    assert index.boilerplate().indexed == 22  # 10% more issues: rebuilt


def test_unfilled_templates_are_not_duplicates_of_each_other(tmp_path):
    """Two reports that left the same template untouched look alike to every signal; without
    the template they have nothing in common, and one titled "Hi" says nothing of its own."""
    repo = Repository(full_name="o/r", fetched_at=T0 + timedelta(days=90))
    filled = [
        issue(n, f"Add the {w} corpus", f"{TEMPLATE}\nThe {w} corpus of news text.")
        for n, w in enumerate(["reuters", "conll", "squad", "glue", "xnli", "mnli"] * 2, start=1)
    ]
    old = issue(30, "Add the cnn corpus", TEMPLATE)
    new = issue(31, "Add the wikitext corpus", TEMPLATE)
    junk = issue(32, "Hi", TEMPLATE)
    plain = [
        issue(100 + n, f"Crash number {n} in the {w}", f"The {w} raises KeyError {n} on load.")
        for n, w in enumerate(["loader", "cache", "parser", "viewer", "hub"] * 8)
    ]
    snap = Snapshot(repo, [*filled, old, new, junk, *plain])
    index = index_of(tmp_path, list(snap.all_issues()))
    cand = Candidate(old, 1.0, bm25=1.0)
    boiler = index.boilerplate()
    kw = {"query_vec": None, "bm25_best": 1.0}
    without = duplicates.features(index, new, cand, boiler=boiler, moment=new.created_at, **kw)
    assert without.prose == 0.0 and without.signals == 0.0  # only the template was shared
    with_template = duplicates.features(index, new, cand, **kw)
    assert with_template.prose > 0.9  # what the score saw before
    assert without.score() < with_template.score()
    assert duplicates.score_candidates(context_for(index, snap, 32)) == []


def test_own_words_in_any_script():
    def has(title, body=""):
        return duplicates.has_own_words(issue(1, title, body), body)

    assert not has("Hi") and not has("1") and not has("Coc")
    assert has("Coc", "The loader crashes on load")  # a word in the title, prose of its own
    assert has("加载数据集时出现编码错误", "调用 load_dataset 后报错")  # CJK: runs of characters
    assert has("Parquet loading crashes")
