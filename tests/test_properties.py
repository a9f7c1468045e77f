"""Property tests: hostile issue text and model answers through the whole pipeline.

On every generated case: no traceback; the comment (pending and approved), the job summary and the
outputs, parsed as GitHub would, hold no mention but the reporter's, no link or image outside the
repository and no raw HTML; the plan marker round-trips; the plan holds only labels of the label
set; the comment is under GitHub's 65,536 characters; the only writes are the one comment and the
pending label, and `apply` with no maintainer's vote writes nothing but the line on its own comment
that says the vote did not count.

Example counts are chosen per property (`tests.strategies.examples`) for the `ci` profile;
`HYPOTHESIS_PROFILE=thorough` runs a long one.
"""

from __future__ import annotations

import json
import tempfile
from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from issue_assistant.action import render_summary
from issue_assistant.approve.sweep import Approver
from issue_assistant.comment import GITHUB_LIMIT, Outcome, extract_plan, render_comment
from issue_assistant.config.sections import Config
from issue_assistant.engines.prompt import parse_answer
from issue_assistant.errors import EngineError
from issue_assistant.live import analyze_live
from issue_assistant.sanitize import sanitize, sanitize_json
from issue_assistant.tracker.memory import MemoryTracker
from tests import strategies as s
from tests.markdown_check import problems
from tests.uncounted import only_the_uncounted_line

REPO = "o/r"
PENDING = "assistant: pending"


def record(record_property, category: str, stats: Counter) -> None:
    record_property(
        "reliability",
        json.dumps(
            {
                "category": category,
                "cases": stats["cases"],
                "wrong_writes": stats["wrong_writes"],
                "doubled_writes": stats["doubled_writes"],
                "tracebacks": stats["tracebacks"],
            }
        ),
    )


def test_sanitizer_output_is_inert_and_bounded(record_property):
    stats: Counter = Counter()

    @s.examples(300)  # a pure function: cheap
    @given(
        text=s.text,
        limit=st.integers(1, 3000),
        table=st.booleans(),
        plain=st.booleans(),
    )
    def check(text, limit, table, plain):
        stats["cases"] += 1
        try:
            out = sanitize(text, REPO, limit, table=table, plain=plain)
        except Exception:
            stats["tracebacks"] += 1
            raise
        assert len(out) <= limit
        assert "\n" not in out
        if not plain:
            assert problems(out, REPO) == [], out

    check()
    record(record_property, "generated", stats)


def _tracker(data, reporter: str) -> MemoryTracker:
    t = MemoryTracker(REPO, roles={"maria": "maintain"})
    for number in (1, 2):
        t.add_issue(
            number,
            data.draw(s.short_text, label="earlier title"),
            data.draw(s.short_text, label="earlier body"),
            user="someone",
        )
        t.tick(60)
    t.add_issue(
        3,
        data.draw(s.text, label="title"),
        data.draw(s.text, label="body"),
        user=reporter,
    )
    t.tick(1)
    return t


def test_pipeline_properties(record_property, fake_engine):
    stats: Counter = Counter()

    @s.examples(40)  # the whole pipeline and an index per example: the dearest here
    @given(data=st.data(), labels=s.label_sets(), reporter=s.login.filter(lambda x: x != "maria"))
    def check(data, labels, reporter):
        stats["cases"] += 1
        fake_engine.reset()
        t = _tracker(data, reporter)
        answer = data.draw(s.answers(labels, [1, 2, 3, 4]), label="answer")
        fake_engine.enqueue(lambda context: parse_answer(answer))
        with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as cache:
            config = Config.model_validate(
                {"engine": {"name": "fake", "fallback": ""}, "index": {"cache_dir": cache}}
            )
            try:
                result = analyze_live(
                    REPO,
                    3,
                    labels=labels,
                    config=config,
                    engine_name=None,
                    writes="live",
                    tracker=t,
                    now=t.now,
                )
            except EngineError:
                assert t.writes == []  # a clean refusal (a confidence out of range, say)
                return
            except Exception:
                stats["tracebacks"] += 1
                raise
        plan = result.plan
        assert plan is not None
        body = result.comment
        # Nothing to propose: no comment at all (issue 17); else the comment and the label.
        expected = [] if result.skipped else [("create_comment", 3, body)]
        if not plan.is_empty:
            expected.append(("add_labels", 3, [PENDING]))
        if t.writes != expected:
            stats["wrong_writes"] += 1
        assert t.writes == expected

        assert len(body) < GITHUB_LIMIT
        # the reporter, asked the questions, is the only one the comment may mention
        assert problems(body, REPO, (f"@{reporter}",)) == [], body
        assert extract_plan(body) == plan
        proposable = {
            n for g in ("type", "area", "topic", "priority") for n in labels.proposable(g)
        }
        assert set(plan.labels()) <= proposable
        assert len(plan.areas) <= labels.max_areas and len(plan.topics) <= labels.max_topics
        if plan.duplicate:
            assert plan.duplicate.number in (1, 2)
        # approved, the questions stay in view, addressed to the reporter
        approved = plan.model_copy(
            update={
                "status": "approved",
                "history": [Outcome(action="approved", actor="maria", at=t.now, asked=True)],
            }
        )
        assert problems(render_comment(approved), REPO, (f"@{reporter}",)) == []
        summary = render_summary(
            command="analyze",
            writes="live",
            result=result,
            done=result.done,
            repository=REPO,
        )
        assert problems(summary, REPO, (f"@{reporter}",)) == [], summary  # the comment's
        outputs = sanitize_json(result.decision, REPO)
        for text in (outputs["summary"], *outputs["questions"], *outputs["dropped"]):
            assert problems(text, REPO) == [], text

        # No maintainer voted (the reporter's own command does not count): apply writes nothing
        # but the line on its own comment that says so.
        t.add_comment(3, reporter, "/assistant approve")
        before = len(t.writes)
        results = Approver(t, labels, config, writes="live", now=t.now).run()  # type: ignore[arg-type]
        own = [c.id for c in t.list_comments(3) if c.user.login == t.login]
        quiet = only_the_uncounted_line(t.writes[before:], own[0] if own else None, plan)
        if not quiet:
            stats["wrong_writes"] += 1
        assert quiet, t.writes[before:]
        assert [r.status for r in results] in ([], ["waiting"])

    check()
    record(record_property, "generated", stats)
