"""The anthropic engine through the real SDK against a local fake Messages API."""

from __future__ import annotations

import pytest

from issue_assistant.config import Config
from issue_assistant.engines import create
from issue_assistant.errors import UserError
from issue_assistant.pipeline import analyze, engines_for
from issue_assistant.tracker.asof import AsOfView
from tests.fakeanthropic import FakeAnthropic, tool_use

ANSWER = {
    "type": "bug",
    "areas": ["streaming"],
    "topics": [],
    "priority": None,
    "duplicate": None,
    "questions": ["Which version?"],
    "summary": "Streaming breaks.",
}


@pytest.fixture
def api(monkeypatch):
    with FakeAnthropic() as fake:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        monkeypatch.setenv("ISSUE_ASSISTANT_MAX_RETRIES", "1")
        yield fake


def run(hf_snapshot, hf_index, hf_labels, config: Config, number: int = 7016):
    view = AsOfView.for_issue(hf_snapshot, number)
    engine, fallback = engines_for(config, hf_labels, "anthropic")
    return analyze(
        view,
        view.target(),
        index=hf_index,
        labels=hf_labels,
        config=config,
        engine=engine,
        fallback=fallback,
        as_of=view.moment,
    )


def test_tool_loop_search_then_submit(api, hf_snapshot, hf_index, hf_labels):
    api.enqueue(
        tool_use("search_issues", {"query": "drop duplicates"}, id="s1"),
        tool_use("get_issue", {"number": 7400}, id="g1"),
        tool_use("submit_triage", ANSWER, id="x1", tokens=(1000, 200)),
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
    assert not d.usage.forced_submit and result.error is None

    first, second, third = api.requests
    sent = {k.lower(): v for k, v in api.headers[0].items()}
    assert "test-key" in (sent.get("x-api-key", "") + sent.get("authorization", ""))
    assert first["model"] == "claude-sonnet-4-6"
    assert "untrusted" in first["system"] and "dataset-viewer" in first["system"]
    assert "drop_duplicates" in first["messages"][0]["content"]
    tools = {t["name"]: t for t in first["tools"]}
    schema = tools["submit_triage"]["input_schema"]["properties"]
    assert schema["type"]["anyOf"][0]["enum"][0] == "bug"
    search_result = second["messages"][-1]["content"][0]
    assert search_result["tool_use_id"] == "s1"
    numbers = [int(line.split()[0][1:]) for line in search_result["content"].splitlines()]
    assert numbers and all(n < 7016 and n != 7016 for n in numbers)  # as of the moment
    assert third["messages"][-1]["content"][0]["content"] == "error: no earlier issue #7400"


def test_last_turn_forces_submit(api, hf_snapshot, hf_index, hf_labels):
    config = Config.model_validate({"engine": {"max_turns": 2}})
    api.enqueue(tool_use("search_issues", {"query": "x"}), tool_use("submit_triage", ANSWER))
    d = run(hf_snapshot, hf_index, hf_labels, config).decision
    assert api.requests[0]["tool_choice"] == {"type": "any"}
    assert api.requests[1]["tool_choice"] == {"type": "tool", "name": "submit_triage"}
    assert d.usage.forced_submit and d.type == "bug"


def test_malformed_answer_is_sent_back_once(api, hf_snapshot, hf_index, hf_labels):
    api.enqueue(
        tool_use("submit_triage", {**ANSWER, "areas": "streaming", "extra": 1}),
        tool_use("submit_triage", {**ANSWER, "type": "not-a-label"}),
    )
    result = run(hf_snapshot, hf_index, hf_labels, Config())
    feedback = api.requests[1]["messages"][-1]["content"][0]["content"]
    assert feedback.startswith("error: the answer has unknown fields: extra")
    assert result.decision.type is None and result.decision.dropped == ["not-a-label"]


def test_api_failure_falls_back_to_similar(api, hf_snapshot, hf_index, hf_labels):
    api.enqueue(
        (500, {"type": "error", "error": {"type": "api_error", "message": "boom"}}),
        (500, {"type": "error", "error": {"type": "api_error", "message": "boom"}}),
    )
    result = run(hf_snapshot, hf_index, hf_labels, Config())
    assert len(api.requests) == 2  # the SDK's own retry, then give up
    assert result.decision.engine == "similar"
    assert result.error and result.error.startswith("anthropic: Anthropic API")


def test_needs_a_key(monkeypatch, hf_labels, hf_snapshot, hf_index):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    engine = create("anthropic", Config(), hf_labels)
    assert engine.needs_network and engine.uses_tools
    view = AsOfView.for_issue(hf_snapshot, 7016)
    with pytest.raises(UserError, match="ANTHROPIC_API_KEY"):
        analyze(
            view,
            view.target(),
            index=hf_index,
            labels=hf_labels,
            config=Config(),
            engine=engine,
            as_of=view.moment,
        )
