"""An engine's answer as the LLM engines give it (the JSON object), shared by the engine tests."""

from __future__ import annotations

ANSWER = {
    "type": "bug",
    "areas": ["streaming"],
    "topics": [],
    "priority": None,
    "duplicate": None,
    "questions": [],
    "summary": "Streaming breaks.",
}
# The same answer with a question for the reporter.
ASKING = {**ANSWER, "questions": ["Which version?"]}
