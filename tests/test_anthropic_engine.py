"""The anthropic engine through the real SDK against a local fake Messages API."""

from __future__ import annotations

import pytest

from issue_assistant.config.sections import Config
from issue_assistant.engines import create
from issue_assistant.errors import UserError
from issue_assistant.pipeline import analyze, engines_for, replay
from issue_assistant.tracker.asof import AsOfView
from tests.answers import ASKING
from tests.fakeanthropic import tool_use
from tests.moments import context_of, moment_of


def run(hf_snapshot, hf_index, hf_labels, config: Config, number: int = 7016):
    return replay(
        hf_snapshot, number, index=hf_index, labels=hf_labels, config=config,
        engine_name="anthropic",
    )  # fmt: skip


def test_tool_loop_search_then_submit(api, hf_snapshot, hf_index, hf_labels):
    api.enqueue(
        tool_use("search_issues", {"query": "drop duplicates"}, id="s1"),
        tool_use("get_issue", {"number": 7400}, id="g1"),
        tool_use("submit_triage", ASKING, id="x1", tokens=(1000, 200)),
    )
    result = run(hf_snapshot, hf_index, hf_labels, Config())
    d = result.decision
    assert (d.engine, d.type, d.areas, d.questions) == (
        "anthropic",
        "bug",
        ["streaming"],
        ["Which version?"],
    )
    assert (d.usage.turns, d.usage.tool_calls, d.usage.tokens_in, d.usage.tokens_out) == (
        3,
        3,
        1200,
        240,
    )
    assert d.usage.cost_usd == pytest.approx((1200 * 3 + 240 * 15) / 1e6)
    assert d.usage.cost_known and d.strategy == "agent"
    assert not d.usage.forced_submit and result.error is None

    first, second, third = api.requests
    sent = {k.lower(): v for k, v in api.headers[0].items()}
    assert "test-key" in (sent.get("x-api-key", "") + sent.get("authorization", ""))
    assert first["model"] == "claude-sonnet-4-6"
    system = first["system"][0]
    assert "untrusted" in system["text"] and "dataset-viewer" in system["text"]
    # The stable prefix (tools, then the system prompt) is cached; later turns reuse it.
    assert system["cache_control"] == {"type": "ephemeral"}
    assert first["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert second["system"] == first["system"] and second["tools"] == first["tools"]
    assert "drop_duplicates" in first["messages"][0]["content"]
    tools = {t["name"]: t for t in first["tools"]}
    assert tools["search_issues"]["input_schema"]["properties"]["limit"]["minimum"] >= 3
    schema = tools["submit_triage"]["input_schema"]["properties"]
    assert schema["type"]["anyOf"][0]["enum"][0] == "bug"
    search_result = second["messages"][-1]["content"][0]
    assert search_result["tool_use_id"] == "s1"
    numbers = [int(line.split()[0][1:]) for line in search_result["content"].splitlines()]
    assert numbers and all(n < 7016 and n != 7016 for n in numbers)  # as of the moment
    assert third["messages"][-1]["content"][0]["content"] == "error: no earlier issue #7400"


def test_last_turn_forces_submit(api, hf_snapshot, hf_index, hf_labels):
    config = Config.model_validate({"engine": {"max_turns": 2}})
    api.enqueue(tool_use("search_issues", {"query": "x"}), tool_use("submit_triage", ASKING))
    d = run(hf_snapshot, hf_index, hf_labels, config).decision
    assert api.requests[0]["tool_choice"] == {"type": "any"}
    assert api.requests[1]["tool_choice"] == {"type": "tool", "name": "submit_triage"}
    assert d.usage.forced_submit and d.type == "bug"


def test_spent_budget_forces_the_answer(api, hf_snapshot, hf_index, hf_labels):
    """Limit class: at the budget the next turn must submit what was gathered."""
    config = Config.model_validate({"engine": {"budget_usd": 0.001}})
    api.enqueue(
        tool_use("search_issues", {"query": "x"}, tokens=(1000, 100)),
        tool_use("submit_triage", ASKING),
    )
    d = run(hf_snapshot, hf_index, hf_labels, config).decision
    assert api.requests[1]["tool_choice"] == {"type": "tool", "name": "submit_triage"}
    assert d.usage.forced_submit and d.type == "bug" and d.usage.cost_usd > 0.001


def test_submit_before_any_search_is_refused(api, hf_snapshot, hf_index, hf_labels):
    api.enqueue(
        tool_use("submit_triage", ASKING, id="early"),
        tool_use("search_issues", {"query": "streaming", "limit": 1}, id="s1"),
        tool_use("submit_triage", ASKING, id="x1"),
    )
    d = run(hf_snapshot, hf_index, hf_labels, Config()).decision
    refusal = api.requests[1]["messages"][-1]["content"][0]
    assert (refusal["tool_use_id"], refusal["content"]) == (
        "early",
        "error: search the earlier issues first",
    )
    hits = api.requests[2]["messages"][-1]["content"][0]["content"].splitlines()
    assert len(hits) >= 3  # a limit below 3 is raised to 3
    assert d.type == "bug" and d.usage.turns == 3


def test_malformed_answer_is_sent_back_once(api, hf_snapshot, hf_index, hf_labels):
    """Schema class: one re-ask quoting the error; a second bad answer gives up cleanly."""
    api.enqueue(
        tool_use("search_issues", {"query": "streaming"}, id="s1"),
        tool_use("submit_triage", {**ASKING, "areas": "streaming", "extra": 1}),
        tool_use("submit_triage", {**ASKING, "type": "not-a-label"}),
    )
    result = run(hf_snapshot, hf_index, hf_labels, Config())
    feedback = api.requests[2]["messages"][-1]["content"][0]["content"]
    assert feedback.startswith("error: the answer has unknown fields: extra")
    assert api.requests[2]["tool_choice"] == {"type": "tool", "name": "submit_triage"}
    d = result.decision
    assert len(api.requests) == 3  # exactly one re-ask
    assert d.engine == "similar" and d.fallback_from == "anthropic"
    assert d.usage.failure == "schema" and d.usage.reasks == 1
    assert result.error.startswith("anthropic (schema): the answer is invalid: type:")
    assert "the `anthropic` engine failed" in result.comment


def test_api_failure_falls_back_to_similar(api, hf_snapshot, hf_index, hf_labels):
    """Transient class: the SDK's own retry with backoff, then the fallback answers."""
    api.enqueue(
        (529, {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}),
        (529, {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}),
    )
    result = run(hf_snapshot, hf_index, hf_labels, Config())
    assert len(api.requests) == 2  # the SDK's own retry, then give up
    assert result.decision.engine == "similar"
    assert result.decision.usage.failure == "transient"
    assert result.error and result.error.startswith("anthropic (transient): Anthropic API")


def test_bad_request_is_unknown_and_not_retried(api, hf_snapshot, hf_index, hf_labels):
    api.enqueue(
        (400, {"type": "error", "error": {"type": "invalid_request_error", "message": "x"}})
    )
    result = run(hf_snapshot, hf_index, hf_labels, Config())
    assert len(api.requests) == 1
    assert result.decision.usage.failure == "unknown" and result.decision.engine == "similar"


def test_refused_key_is_a_setup_error(api, hf_snapshot, hf_index, hf_labels):
    """Setup class: no retry, no fallback answer, a UserError (exit 2) naming the engine."""
    api.enqueue(
        (401, {"type": "error", "error": {"type": "authentication_error", "message": "bad key"}})
    )
    with pytest.raises(UserError, match="the anthropic engine cannot run"):
        run(hf_snapshot, hf_index, hf_labels, Config())
    assert len(api.requests) == 1


def test_duplicate_is_verified_in_a_separate_call(api, hf_snapshot, hf_index, hf_labels):
    view = AsOfView.for_issue(hf_snapshot, 7016)
    engine, _ = engines_for(Config(), hf_labels, "anthropic", "rag")
    ctx = context_of(view, hf_index, hf_labels, Config())
    first = ctx.candidates[0].issue.number
    dup = {**ASKING, "duplicate": {"number": first, "reason": "same", "confidence": 0.9}}
    no = {
        "id": "v",
        "type": "message",
        "role": "assistant",
        "model": "fake",
        "content": [{"type": "text", "text": '{"same": false, "reason": "other cause"}'}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 50, "output_tokens": 10},
    }
    api.enqueue(tool_use("submit_triage", dup), no)
    d = engine.decide(ctx)
    assert d.duplicate is None and d.usage.verify_calls == 1
    verify = api.requests[1]
    assert "tools" not in verify and f"#{first}" in verify["messages"][0]["content"]
    assert d.usage.tokens_in == 150


def test_needs_a_key(monkeypatch, hf_labels, hf_snapshot, hf_index):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    engine = create("anthropic", Config(), hf_labels)
    assert engine.needs_network and engine.uses_tools
    view = AsOfView.for_issue(hf_snapshot, 7016)
    with pytest.raises(UserError, match="ANTHROPIC_API_KEY"):
        analyze(
            moment_of(view, hf_index, hf_labels, Config()),
            view.target(),
            config=Config(),
            engine=engine,
        )
