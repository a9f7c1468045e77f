"""The plain-Python WordPiece tokenizer against the `tokenizers` package, its reference."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from issue_assistant.index.duplicates import embedding_text
from issue_assistant.index.word_vectors import MAX_TOKENS, load_word_vectors
from issue_assistant.index.wordpiece import WordPiece

tokenizers = pytest.importorskip("tokenizers")
embeddings = pytest.importorskip("issue_assistant.index.embeddings")

SPECIAL = ("[CLS]", "[SEP]", "[PAD]", "[MASK]", "[UNK]")


@pytest.fixture(scope="module")
def both() -> tuple[WordPiece, object]:
    _, path = embeddings.model_files()
    reference = tokenizers.Tokenizer.from_file(str(path))
    reference.no_padding()
    reference.no_truncation()
    vocab = json.loads(path.read_text())["model"]["vocab"]
    return WordPiece([p for p, _ in sorted(vocab.items(), key=lambda kv: kv[1])]), reference


def _theirs(reference, text: str) -> list[int]:
    return reference.encode(text, add_special_tokens=False).ids


def test_the_same_ids_as_the_reference_on_every_shared_issue(both, hf_snapshot, poetry_snapshot):
    """Every title and body of the shared data (but texts that spell a special token such as
    `[SEP]`, which the reference reads as that token and we read as text)."""
    mine, reference = both
    texts = [
        text
        for snapshot in (hf_snapshot, poetry_snapshot)
        for issue in snapshot.all_issues()
        for text in (issue.title, issue.body or "")
        if not any(s in text for s in SPECIAL)
    ]
    assert len(texts) > 14_000
    differ = [t for t in texts if mine.encode(t) != _theirs(reference, t)]
    assert differ == []


@given(st.text(max_size=200) | st.text(st.characters(max_codepoint=127), max_size=200))
def test_the_same_ids_as_the_reference_on_any_text(both, text):
    """Any text, and ASCII text (which takes a path of its own)."""
    mine, reference = both
    if not any(s.lower() in text.lower() for s in SPECIAL):
        assert mine.encode(text) == _theirs(reference, text)


def test_a_limit_keeps_the_first_ids_and_a_special_token_is_read_as_text(both):
    mine, reference = both
    text = "ArrowInvalid: Parquet magic bytes not found " * 20
    assert mine.encode(text, 7) == _theirs(reference, text)[:7]
    assert mine.encode("a [SEP] b") == _theirs(reference, "a [ SEP ] b")


def test_the_shipped_vectors_tokenize_as_the_model_does(both, hf_snapshot):
    """The shipped table's vocabulary is the model's, so a text's pieces are the model's."""
    mine, reference = both
    shipped = load_word_vectors()
    issue = hf_snapshot.get_issue(7100)
    text = embedding_text(issue)
    ids = shipped.pieces.encode(text, MAX_TOKENS)
    assert ids == _theirs(reference, text)[:MAX_TOKENS] == mine.encode(text, MAX_TOKENS)
