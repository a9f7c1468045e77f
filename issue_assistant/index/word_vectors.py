"""Word vectors shipped with the package: dense retrieval without a model to run.

`word_vectors.npz` beside this module holds, for each piece of all-MiniLM-L6-v2's vocabulary,
the vector the sentence model gives that piece alone, cut to `DIM` values (int8, a scale per
piece), and the piece's weight (its inverse document frequency on the shared data); made by
`bench/distill_word_vectors.py`. A text's vector is the weighted mean of its first `MAX_TOKENS`
pieces' vectors, L2-normalised, so a dot product is the cosine. No model runs: an issue costs a
tokenization and a sum, and nothing beyond numpy is needed.

These vectors find candidates (`index/retrieval.py`); they do not carry a duplicate claim or
feed the label model, which read meaning from sentence embeddings only (`IssueIndex.sentences`).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from issue_assistant.index.wordpiece import WordPiece

WORDS_FILE = "word_vectors.npz"
DIM = 192
MAX_TOKENS = 512
MODEL_ID = f"minilm-words-{DIM}-1"


class WordVectors:
    """Text to unit vectors from the shipped table (`vectors.TextVectors`)."""

    model_id = MODEL_ID
    dim = DIM

    def __init__(self, path: Path) -> None:
        with np.load(path, allow_pickle=False) as data:
            vocabulary = data["vocabulary"].tobytes().decode().split("\n")
            self.about = json.loads(data["about"].tobytes().decode())
            weight = data["weight"].astype(np.float32)
            # each piece's vector times its weight, so a text's vector is a sum
            self._table = (
                data["table"].astype(np.float32)
                * (data["scale"].astype(np.float32) * weight)[:, None]
            )
        if self._table.shape != (len(vocabulary), DIM):
            shape = f"{len(vocabulary)} x {DIM}"
            raise ValueError(f"{path}: a table of {self._table.shape}, not {shape}")
        self.pieces = WordPiece(vocabulary)  # the model's tokenizer

    def embed_one(self, text: str) -> np.ndarray:
        ids = self.pieces.encode(text, MAX_TOKENS)
        if not ids:
            return np.zeros(DIM, dtype=np.float32)
        vec = self._table[ids].sum(axis=0)
        norm = float(np.linalg.norm(vec))
        return (vec / norm if norm else vec).astype(np.float32)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """An (n, `DIM`) float32 array of unit vectors."""
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        return np.stack([self.embed_one(t) for t in texts])


SHIPPED = Path(__file__).with_name(WORDS_FILE)


@functools.cache
def load_word_vectors(path: Path = SHIPPED) -> WordVectors:
    """The shipped word vectors (read once per process)."""
    return WordVectors(path)
