"""Engine answers that crash (issue 16): any exception out of an engine's run or parse is a
classified failure that the fallback answers, counted and never a traceback.

Each case records what it measured for `docs/reliability.md` (`python -m tests.reliability`).
"""

from __future__ import annotations

import contextlib
import json
from types import SimpleNamespace
from typing import Any

import pytest

from issue_assistant.config.labels import load_labels
from issue_assistant.config.sections import Config
from issue_assistant.decision import Decision
from issue_assistant.engines import create
from issue_assistant.engines.base import Engine
from issue_assistant.engines.command import Finished
from issue_assistant.engines.failures import EngineFailure
from issue_assistant.engines.prompt import parse_answer
from issue_assistant.errors import EngineError
from issue_assistant.pipeline import decide
from tests.test_approve import DATA
from tests.test_races_faults import record

PROPERTY = "reliability"  # what each case records for tests/reliability.py

DEEP = "[" * 100_000
LABELS = load_labels(DATA / "labels.toml")


class Steady(Engine):
    """A fallback that always answers (not registered: only these tests use it)."""

    name = "fake-llm"  # a known engine name, so `config.options` has its section

    def decide(self, context: Any) -> Decision:
        return Decision(summary="the fallback answered")


def _raise(exc: BaseException):
    def answer(context: Any) -> Decision:
        raise exc

    return answer


CRASHES: dict[str, BaseException] = {
    "RecursionError": RecursionError("maximum recursion depth exceeded"),
    "TypeError": TypeError("string indices must be integers"),
    "KeyError": KeyError("usage"),
    "AttributeError": AttributeError("'str' object has no attribute 'get'"),
    "ValueError": ValueError("could not convert string to float: 'abc'"),
    "MemoryError": MemoryError(),
    "ZeroDivisionError": ZeroDivisionError("division by zero"),
}


@pytest.mark.parametrize("name", list(CRASHES))
def test_any_exception_in_an_engine_goes_to_the_fallback(fake_engine, record_property, name):
    fake_engine.enqueue(_raise(CRASHES[name]))
    config = Config()
    engine = create("fake", config, LABELS)
    context = SimpleNamespace(candidates=[])
    tracebacks = 0
    try:
        decision, error = decide(engine, context, Steady(config, LABELS))  # type: ignore[arg-type]
    except Exception:  # noqa: BLE001 - what is measured
        tracebacks, decision, error = 1, None, None
    what = {"kind": name, "where": "engine run"}
    record(record_property, "engine", 0, 0, tracebacks, **what)
    assert decision is not None and decision.summary == "the fallback answered"
    assert decision.fallback_from == "fake" and decision.usage.failure == "crash"
    assert error is not None and error.startswith(f"fake (crash): fake failed: {name}")


def test_an_exception_while_warming_goes_to_the_fallback(fake_engine, monkeypatch):
    engine = create("fake", Config(), LABELS)
    monkeypatch.setattr(engine, "warm", _raise(RecursionError("deep")))
    decision, error = decide(engine, SimpleNamespace(candidates=[]), Steady(Config(), LABELS))  # type: ignore[arg-type]
    assert decision.usage.failure == "crash" and "RecursionError" in (error or "")


def test_without_a_fallback_a_crash_is_an_engine_error(fake_engine):
    fake_engine.enqueue(_raise(TypeError("odd")))
    engine = create("fake", Config(), LABELS)
    with pytest.raises(EngineError, match="fake failed: TypeError: odd") as caught:
        decide(engine, SimpleNamespace(candidates=[]))  # type: ignore[arg-type]
    assert isinstance(caught.value, EngineFailure) and caught.value.kind == "crash"


# ---- the parsers: odd answers and envelopes ----------------------------------------------


ANSWERS = {
    "100,000 [": DEEP,
    "100,000 [ in prose": "Here it is: {" + DEEP + "}",
    "nested 5,000 deep object": '{"type": ' + "[" * 5000 + "]" * 5000 + "}",
    "nested 900 deep object": '{"type": ' + "[" * 900 + "]" * 900 + "}",
    "a list": "[1, 2]",
    "a number": "12",
    "null": "null",
}


@pytest.mark.parametrize("name", list(ANSWERS))
def test_the_answer_parser_classifies_odd_answers(record_property, name):
    tracebacks = 0
    try:
        parse_answer(ANSWERS[name])
        classified = None
    except EngineFailure as exc:
        classified = exc.kind
    except Exception:  # noqa: BLE001 - what is measured
        tracebacks, classified = 1, None
    record(record_property, "engine", 0, 0, tracebacks, kind=name, where="answer parser")
    assert tracebacks == 0 and classified == "schema"


def _claude(data: Any, code: int = 0) -> Finished:
    text = data if isinstance(data, str) else json.dumps(data)
    return Finished(code, text, "")


OK_CLAUDE = {"type": "result", "subtype": "success", "result": "{}", "session_id": "s"}
ENVELOPES: dict[str, tuple[str, Finished]] = {
    "claude: 100,000 [": ("claude", _claude(DEEP)),
    "claude: 100,000 [ exit 1": ("claude", _claude(DEEP, 1)),
    "claude: usage a string": ("claude", _claude({**OK_CLAUDE, "usage": "lots"})),
    "claude: usage a list": ("claude", _claude({**OK_CLAUDE, "usage": [1, 2]})),
    "claude: cost abc": ("claude", _claude({**OK_CLAUDE, "total_cost_usd": "abc"})),
    "claude: cost a list": ("claude", _claude({**OK_CLAUDE, "total_cost_usd": [1]})),
    "claude: tokens strings": (
        "claude",
        _claude({**OK_CLAUDE, "usage": {"input_tokens": "x", "output_tokens": None}}),
    ),
    "claude: turns nan": ("claude", _claude(json.dumps(OK_CLAUDE)[:-1] + ', "num_turns": NaN}')),
    "claude: session an object": ("claude", _claude({**OK_CLAUDE, "session_id": {"a": 1}})),
    "claude: error status a string": (
        "claude",
        _claude({**OK_CLAUDE, "subtype": "error", "is_error": True, "api_error_status": "500"}, 1),
    ),
    "claude: result an object": ("claude", _claude({**OK_CLAUDE, "result": {"type": "bug"}})),
    "gemini: 100,000 [": ("gemini", Finished(0, DEEP, "")),
    "gemini: 100,000 [ on stderr": ("gemini", Finished(1, "", "[ERROR] {" + DEEP)),
    "gemini: error a string, exit 41": ("gemini", Finished(41, '{"error": "boom"}', "")),
    "gemini: error a list, exit 53": ("gemini", Finished(53, '{"error": [1]}', "")),
    "gemini: error a string": ("gemini", Finished(1, '{"error": "boom"}', "")),
    "gemini: error code a string": (
        "gemini",
        Finished(1, '{"error": {"code": "429", "message": "x"}}', ""),
    ),
    "gemini: stats a list": ("gemini", Finished(0, '{"response": "{}", "stats": [1]}', "")),
    "gemini: models a list": (
        "gemini",
        Finished(0, '{"response": "{}", "stats": {"models": [1], "tools": 3}}', ""),
    ),
    "gemini: model info a string": (
        "gemini",
        Finished(0, '{"response": "{}", "stats": {"models": {"m": "x"}}}', ""),
    ),
    "gemini: tokens strings": (
        "gemini",
        Finished(
            0, '{"response": "{}", "stats": {"models": {"m": {"tokens": {"prompt": "9"}}}}}', ""
        ),
    ),
    "copilot: 100,000 [ lines": ("copilot", Finished(0, DEEP + "\n" + DEEP, "")),
    "copilot: data a list": (
        "copilot",
        Finished(0, '{"type": "assistant.message", "data": [1]}\n{"type": "result"}', ""),
    ),
    "copilot: error data a string": (
        "copilot",
        Finished(1, '{"type": "session.error", "data": "boom"}', ""),
    ),
    "copilot: status a string": (
        "copilot",
        Finished(1, '{"type": "session.error", "data": {"statusCode": "500"}}', ""),
    ),
}


@pytest.mark.parametrize("name", list(ENVELOPES))
def test_cli_envelopes_never_raise_past_the_failure_classes(record_property, name):
    engine_name, done = ENVELOPES[name]
    engine = create(engine_name, Config(), LABELS)
    tracebacks = 0
    try:
        reply = engine.parse(done)  # type: ignore[attr-defined]
        with contextlib.suppress(EngineFailure):
            parse_answer(reply.text)
    except EngineFailure:
        pass
    except Exception:  # noqa: BLE001 - what is measured
        tracebacks = 1
    record(record_property, "engine", 0, 0, tracebacks, kind=name, where="CLI output parser")
    assert tracebacks == 0
