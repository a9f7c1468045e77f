"""The engine contract: typed [engines.NAME] options, check_ready() before any issue, strategies,
the per-issue time limit, failure classes and their recovery, duplicate verification, prices."""

from __future__ import annotations

import json
import logging
import threading
import time
from pathlib import Path

import pytest

from issue_assistant.cli import main
from issue_assistant.config.sections import Config, load_config
from issue_assistant.decision import Decision
from issue_assistant.engines import prices
from issue_assistant.engines.anthropic import DEFAULT_MODEL
from issue_assistant.engines.failures import EngineFailure, from_status, from_text
from issue_assistant.engines.fake import FakeLLM
from issue_assistant.errors import EngineError, UserError
from issue_assistant.pipeline import bounded, engines_for, replay
from issue_assistant.tracker.asof import AsOfView
from tests.answers import ANSWER
from tests.conftest import HF, ROOT
from tests.moments import context_of


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "config.toml"
    p.write_text(text)
    return p


# Options ---------------------------------------------------------------------------------


def test_engine_tables_are_typed_per_engine(tmp_path):
    cfg = load_config(
        write(tmp_path, '[engines.llama]\nn_ctx = 2048\n\n[engines.claude]\nbinary = "cc"\n')
    )
    assert cfg.options("llama").n_ctx == 2048
    assert cfg.options("claude").binary == "cc"
    assert cfg.options("gemini").binary == ""  # defaults for a table not given


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "[engines.llama]\nn_ctx = 2048\ncolour = 1\n",
            "config.toml:3: engines.llama.colour: unknown key",
        ),
        ("[engines.llama]\nn_ctx = 'big'\n", "config.toml:2: engines.llama.n_ctx"),
        ("[engines.nosuch]\nx = 1\n", "config.toml:1: engines.nosuch: unknown engine 'nosuch'"),
        ("[similar]\nneighbours = 3\n", "config.toml:2: similar.neighbours: unknown key"),
        ("[engine]\nstrategy = 'guess'\n", "config.toml:2: engine.strategy"),
        ("[similar]\nneighbors = 3\n[engines.similar]\nneighbors = 4\n", "keep [engines.similar]"),
    ],
)
def test_bad_engine_options_name_file_line_and_key(tmp_path, text, expected):
    with pytest.raises(UserError) as err:
        load_config(write(tmp_path, text))
    assert expected in str(err.value)


def test_old_sections_still_work_with_a_deprecation_line(tmp_path, caplog):
    path = write(tmp_path, "[engine]\nname = 'similar'\n\n[similar]\nneighbors = 7\n")
    with caplog.at_level(logging.WARNING):
        cfg = load_config(path)
    assert cfg.similar.neighbors == 7 and cfg.options("similar").neighbors == 7
    (line,) = [r.getMessage() for r in caplog.records if "deprecated" in r.getMessage()]
    assert line == f"{path}:4: [similar] is deprecated: move it to [engines.similar]"


# check_ready() ----------------------------------------------------------------------------


def test_evaluate_without_a_key_stops_before_the_first_issue(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.chdir(ROOT)
    report = tmp_path / "report.md"
    code = main(
        ["evaluate", "--snapshot", str(HF), "--engine", "anthropic", "--issues", "3"]
        + ["--report", str(report), "--labels", str(ROOT / "bench" / "hf-datasets.labels.toml")]
    )
    err = capsys.readouterr().err
    assert code == 2 and "ANTHROPIC_API_KEY" in err
    assert not report.exists() and not report.with_suffix(".jsonl").exists()


def test_config_check_runs_check_ready(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))
    path = write(tmp_path, "[engine]\nname = 'gemini'\n")
    code = main(["config", "check", "--config", str(path), "--labels", str(ROOT / "labels.toml")])
    assert code == 2 and "npm install -g @google/gemini-cli" in capsys.readouterr().err


# Strategies ------------------------------------------------------------------------------


def test_strategy_is_chosen_checked_and_recorded(hf_labels):
    assert engines_for(Config(), hf_labels, "llama")[0].strategy == "rag"
    assert engines_for(Config(), hf_labels, "anthropic")[0].strategy == "agent"
    assert engines_for(Config(), hf_labels, "claude")[0].strategy == "agent"
    cfg = Config.model_validate({"engine": {"strategy": "zero-shot"}})
    engine, fallback = engines_for(cfg, hf_labels, "llama")
    assert engine.strategy == "zero-shot" and fallback.strategy == "rag"  # the fallback: its own
    with pytest.raises(UserError, match="cannot run the 'agent' strategy"):
        engines_for(Config(), hf_labels, "llama", "agent")


def run(engine_name, hf_snapshot, hf_index, hf_labels, cfg=None, strategy=None, number=7016):
    return replay(
        hf_snapshot,
        number,
        index=hf_index,
        labels=hf_labels,
        config=cfg or Config(),
        engine_name=engine_name,
        strategy=strategy,
    )


def test_strategy_flag_reaches_the_decision(tmp_path, monkeypatch, capsys):
    # No fallback engine: the flag's way to the decision needs no label model fit for one.
    monkeypatch.chdir(tmp_path)
    config = write(tmp_path, '[engine]\nfallback = ""\n')
    args = ["analyze", "--snapshot", str(HF), "--issue", "7016", "--json", "--engine", "fake"]
    labels = ["--labels", str(ROOT / "bench" / "hf-datasets.labels.toml"), "--config", str(config)]
    assert main([*args, *labels, "--strategy", "zero-shot"]) == 0
    decision = json.loads(capsys.readouterr().out)
    assert decision["strategy"] == "zero-shot" and decision["engine"] == "fake"


def test_zero_shot_shows_no_candidates(hf_snapshot, hf_index, hf_labels):
    FakeLLM.replies.extend([ANSWER, ANSWER])
    rag = run("fake-llm", hf_snapshot, hf_index, hf_labels).decision
    zero = run("fake-llm", hf_snapshot, hf_index, hf_labels, strategy="zero-shot").decision
    (_, rag_prompt), (_, zero_prompt) = FakeLLM.prompts
    assert "#" in rag_prompt and rag_prompt != zero_prompt
    assert "propose no duplicate" in zero_prompt
    assert (rag.strategy, zero.strategy) == ("rag", "zero-shot")


# Time limit and failure classes ----------------------------------------------------------


def test_timeout_is_enforced_for_any_engine(fake_engine, hf_snapshot, hf_index, hf_labels):
    """The pipeline gives up at the limit and cancels the engine: an engine that watches its
    deadline stops, and its thread is joined, not left running behind the next issue."""
    stopped: list[bool] = []

    def slow(context):
        # waits for the pipeline's cancel (not a sleep): this test takes the limit, no longer
        stopped.append(fake_engine.deadlines[-1].cancelled.wait(30))
        return Decision(type="bug")

    # The fallback's label model is fit once per index and moment (the Action's `index` step
    # does it ahead): fit it first, so that the time limit meets only the slow engine.
    run("similar", hf_snapshot, hf_index, hf_labels)
    fake_engine.enqueue(slow)
    cfg = Config.model_validate({"engine": {"timeout_seconds": 1}})
    start = time.monotonic()
    result = run("fake", hf_snapshot, hf_index, hf_labels, cfg)
    assert time.monotonic() - start < 4
    d = result.decision
    assert d.engine == "similar" and d.fallback_from == "fake" and d.usage.failure == "limit"
    assert result.error == "fake (limit): no answer within 1 s (timeout_seconds)"
    assert stopped == [True]  # the engine was told, and had stopped when the pipeline went on
    assert not [t for t in threading.enumerate() if t.name == "engine-fake"]


def test_bounded_joins_a_cancelled_call_and_leaves_one_that_ignores_it(caplog):
    cancel = threading.Event()

    def obeys():
        cancel.wait(30)
        return "late"

    with pytest.raises(EngineFailure, match="no answer within 0 s") as failed:
        bounded(obeys, 0.05, "obeys", cancel=cancel.set, grace=30)
    assert failed.value.kind == "limit" and cancel.is_set()
    assert not [t for t in threading.enumerate() if t.name == "engine-obeys"]

    release = threading.Event()
    with caplog.at_level(logging.WARNING), pytest.raises(EngineFailure):
        bounded(lambda: release.wait(30), 0.05, "deaf", cancel=lambda: None, grace=0.05)
    assert "the deaf engine did not stop when its time was up" in caplog.text
    release.set()  # the daemon thread ends here, not at exit
    assert bounded(lambda: 42, 5, "quick") == 42


def test_transient_is_retried_with_backoff(monkeypatch, hf_snapshot, hf_index, hf_labels):
    monkeypatch.setattr("issue_assistant.engines.failures.backoff", lambda attempt, base=1.0: 0.01)
    FakeLLM.replies.extend([EngineFailure("HTTP 529 overloaded", "transient"), ANSWER])
    d = run("fake-llm", hf_snapshot, hf_index, hf_labels).decision
    assert d.engine == "fake-llm" and d.usage.retries == 1 and d.usage.failure is None


def test_unknown_is_not_retried(hf_snapshot, hf_index, hf_labels):
    FakeLLM.replies.extend([EngineFailure("odd", "unknown"), ANSWER])
    result = run("fake-llm", hf_snapshot, hf_index, hf_labels)
    assert result.decision.engine == "similar" and result.decision.usage.failure == "unknown"
    assert len(FakeLLM.prompts) == 1


def test_schema_error_is_quoted_in_one_reask(hf_snapshot, hf_index, hf_labels):
    FakeLLM.replies.extend(['{"type": "bug", "colour": 1}', json.dumps(ANSWER)])
    d = run("fake-llm", hf_snapshot, hf_index, hf_labels).decision
    (kind, text) = FakeLLM.prompts[1]
    assert kind == "reask" and "unknown fields: colour" in text
    assert d.engine == "fake-llm" and d.type == "bug" and d.usage.reasks == 1


def test_a_duplicate_that_was_never_shown_is_a_schema_error(hf_snapshot, hf_index, hf_labels):
    bad = {**ANSWER, "duplicate": {"number": 1, "reason": "x", "confidence": 0.9}}
    FakeLLM.replies.extend([bad, bad])
    result = run("fake-llm", hf_snapshot, hf_index, hf_labels)
    assert "#1 is not an earlier issue you were shown" in FakeLLM.prompts[1][1]
    assert result.decision.engine == "similar"
    assert result.decision.usage.failure == "schema"


def test_classification_uses_structured_signals_first():
    assert [from_status(s) for s in (429, 500, 503, 529, None)] == ["transient"] * 5
    assert [from_status(s) for s in (401, 403)] == ["setup", "setup"]
    assert from_status(400) == from_status(404) == "unknown"
    assert from_text("Invalid API key · Please run /login") == "setup"
    assert from_text("the model is overloaded, try again later") == "transient"
    assert from_text("Error: something unexpected") == "unknown"


# Duplicate verification ------------------------------------------------------------------


@pytest.mark.parametrize(("same", "kept"), [(True, True), (False, False), ("garbage", False)])
def test_duplicate_is_verified_separately(same, kept, hf_snapshot, hf_index, hf_labels):
    view = AsOfView.for_issue(hf_snapshot, 7016)
    ctx = context_of(view, hf_index, hf_labels, Config())
    first = ctx.candidates[0].issue.number
    dup = {**ANSWER, "duplicate": {"number": first, "reason": "same", "confidence": 0.9}}
    verdict = {"same": same, "reason": "one reason"} if same != "garbage" else "not json"
    FakeLLM.replies.extend([dup, verdict])
    engine, _ = engines_for(Config(), hf_labels, "fake-llm")
    d = engine.decide(ctx)
    assert (d.duplicate is not None) == kept
    assert d.usage.verify_calls == 1 and d.usage.tokens_in == 20
    kind, prompt = FakeLLM.prompts[1]
    assert kind == "verify" and f"#{first}:" in prompt and "root cause" in prompt


def test_verification_can_be_switched_off(hf_snapshot, hf_index, hf_labels):
    cfg = Config.model_validate({"engines": {"fake-llm": {"verify_duplicates": False}}})
    view = AsOfView.for_issue(hf_snapshot, 7016)
    ctx = context_of(view, hf_index, hf_labels, cfg)
    first = ctx.candidates[0].issue.number
    FakeLLM.replies.append(
        {**ANSWER, "duplicate": {"number": first, "reason": "r", "confidence": 1}}
    )
    d = engines_for(cfg, hf_labels, "fake-llm")[0].decide(ctx)
    assert d.duplicate.number == first and d.usage.verify_calls == 0


# Prices ----------------------------------------------------------------------------------


def test_every_default_model_has_a_price():
    assert prices.known(DEFAULT_MODEL, "anthropic")
    for model in ("claude-haiku-4-5", "claude-opus-4-1", "gemini-2.5-flash", "gemini-2.5-pro"):
        provider = "anthropic" if model.startswith("claude") else "google"
        assert prices.known(model, provider), model
    assert prices.cost(DEFAULT_MODEL, "anthropic", 1_000_000, 0) == pytest.approx(3.0)
    cached = prices.cost(DEFAULT_MODEL, "anthropic", 0, 0, cache_read=1_000_000)
    assert cached == pytest.approx(0.3)  # cached input at a tenth of the price
    assert prices.cost("no-such-model", "anthropic", 10, 10) is None


def test_fallback_is_warmed_before_the_engine_runs(fake_engine, hf_snapshot, hf_index, hf_labels):
    """The fallback's label model is loaded before the primary engine is timed and fails, so a
    fit (seconds on a large history) never lands inside the failing engine's turn."""
    from issue_assistant.engines.similar import SimilarEngine

    calls: list[str] = []
    warm = SimilarEngine.warm

    def recording_warm(self, context):
        calls.append("warm fallback")
        warm(self, context)

    def failing(context):
        calls.append("engine decides")
        raise EngineError("boom")

    fake_engine.enqueue(failing)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(SimilarEngine, "warm", recording_warm)
        result = run("fake", hf_snapshot, hf_index, hf_labels)
    assert calls == ["warm fallback", "engine decides"]
    assert result.decision.engine == "similar" and result.decision.fallback_from == "fake"
