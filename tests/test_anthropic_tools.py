"""Issue 8 item 8: a model's malformed tool calls are answered with the error, never raised.

Through the anthropic engine, the real SDK and the local fake Messages API: one turn of bad calls
(wrong types, a list or a string for the arguments, missing and unknown keys, an unknown tool, a
file tool offered only with a checkout), each answered with an error result; then a good submit.
"""

from __future__ import annotations

from issue_assistant.config.sections import Config
from issue_assistant.pipeline import replay
from tests.answers import ANSWER
from tests.fakeanthropic import tool_use

BAD_CALLS = [
    ("search_issues", {"query": "drop duplicates", "limit": "many"}, "limit: Input should be"),
    ("search_issues", ["drop", "duplicates"], "must be a JSON object, not list"),
    ("get_issue", "7000", "must be a JSON object, not str"),
    ("get_issue", {}, "number: Field required"),
    ("get_issue", {"number": 7000, "full": True}, "full: Extra inputs are not permitted"),
    ("close_issue", {"number": 7000}, "unknown tool 'close_issue'"),
    ("read_file", {"path": "../../etc/passwd"}, "unknown tool 'read_file'"),
]


def calls_reply(calls: list[tuple[str, object, str]]) -> dict:
    reply = tool_use("search_issues", {}, id="unused")
    reply["content"] = [
        {"type": "tool_use", "id": f"bad{i}", "name": name, "input": data}
        for i, (name, data, _) in enumerate(calls)
    ]
    return reply


def test_bad_tool_calls_are_answered_then_submit(api, hf_snapshot, hf_index, hf_labels):
    api.enqueue(
        calls_reply(BAD_CALLS),
        tool_use("get_issue", {"number": 7000}, id="good"),
        tool_use("submit_triage", ANSWER, id="done"),
    )
    result = replay(
        hf_snapshot, 7016, index=hf_index, labels=hf_labels, config=Config(),
        engine_name="anthropic",
    )  # fmt: skip
    assert result.error is None
    d = result.decision
    assert (d.engine, d.type, d.areas) == ("anthropic", "bug", ["streaming"])
    assert (d.usage.turns, d.usage.tool_calls) == (3, len(BAD_CALLS) + 2)

    offered = [t["name"] for t in api.requests[0]["tools"]]
    assert offered == ["search_issues", "get_issue", "list_labels", "submit_triage"]
    answers = api.requests[1]["messages"][-1]["content"]
    assert [a["tool_use_id"] for a in answers] == [f"bad{i}" for i in range(len(BAD_CALLS))]
    for answer, (_, _, expected) in zip(answers, BAD_CALLS, strict=True):
        assert answer["is_error"] is True
        assert answer["content"].startswith("error: ") and expected in answer["content"]
    good = api.requests[2]["messages"][-1]["content"][0]
    assert good["tool_use_id"] == "good" and "is_error" not in good
    assert good["content"].startswith("#7000 [")
