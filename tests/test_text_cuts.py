"""Text in the comment and the context files (issue 16): every template field that is cut is
cut first and sanitized after, so no cut leaves a mention, a link or HTML; one-line text in a
context file's headings is in a code span. Recorded for `docs/reliability.md`.
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from issue_assistant.comment import (
    LIMITS,
    Evidence,
    Outcome,
    Plan,
    SeeAlso,
    SetAside,
    render_comment,
)
from issue_assistant.decision import Duplicate
from tests import strategies as s
from tests.markdown_check import MD, problems

REPO = "o/r"
NOW = datetime(2025, 1, 1, tzinfo=UTC)
# Text around each cut: a code span or link straddling the limit is what broke.
near_cut = st.builds(
    lambda pad, attack, tail: "x" * pad + attack + tail,
    st.integers(0, 200),
    st.sampled_from(
        [
            "`@octocat`",
            "`@octocat",
            "[a](https://evil.example)",
            "<img src=x>",
            "@mallory",
            "``@m``",
            "&#64;m",
            "[x](//e.x)",
        ]
    ),
    s.short_text,
)
field_text = st.one_of(s.text, near_cut)


def record(record_property, stats: Counter) -> None:
    record_property(
        "reliability",
        json.dumps(
            {
                "category": "text",
                "cases": stats["cases"],
                "wrong_writes": stats["wrong_writes"],
                "doubled_writes": 0,
                "tracebacks": stats["tracebacks"],
                "kind": "every truncating template field",
                "where": "comment and questions",
            }
        ),
    )


def test_every_truncating_field_is_cut_then_sanitized(record_property):
    stats: Counter = Counter()

    @s.examples(150)  # a comment rendered per example, no pipeline
    @given(
        title=field_text,
        summary=field_text,
        question=field_text,
        reason=field_text,
        label=field_text,
        change=field_text,
        model=field_text,
        actor=field_text,
        status=st.sampled_from(["pending", "approved", "dismissed"]),
    )
    def check(title, summary, question, reason, label, change, model, actor, status):
        stats["cases"] += 1
        plan = Plan(
            repository=REPO,
            issue=3,
            reporter="reporter",
            created_at=NOW,
            summary=summary,
            questions=[question],
            model=model,
            engine=model,
            duplicate=Duplicate(number=1, reason=reason, confidence=0.5),
            evidence=[Evidence(number=1, title=title, state=title, labels=[label])],
            see_also=[SeeAlso(number=7, title=title)],
            set_aside=[SetAside(actor=actor, via=label)],
        )
        if status != "pending":
            outcome = Outcome(
                action=status, actor=actor, at=NOW, changes=[change, title], asked=True
            )
            plan = plan.model_copy(update={"status": status, "history": [outcome]})
        try:
            texts = [render_comment(plan, fallback_from=model)]
        except Exception:
            stats["tracebacks"] += 1
            raise
        found = [p for text in texts for p in problems(text, REPO, ("@reporter",))]
        stats["wrong_writes"] += bool(found)
        assert found == [], found

    check()
    record(record_property, stats)


def test_the_see_also_cut_inside_a_code_span_leaves_no_mention():
    """The case found: a discussion title cut after sanitizing left `` `@octoc…) ``."""
    for pad in range(60, 110):
        title = "x" * pad + " `@octocat` and more words after it"
        plan = Plan(
            repository=REPO,
            issue=3,
            reporter="r",
            created_at=NOW,
            see_also=[SeeAlso(number=7, title=title)],
        )
        text = render_comment(plan)
        assert problems(text, REPO) == [], (pad, [ln for ln in text.splitlines() if "See" in ln])
    assert LIMITS["see_also"] <= LIMITS["title"]


def context_files(snap, tmp_path) -> dict[str, str]:  # noqa: ANN001
    """The context files of issue 2 of `snap`, as of a minute after it was opened."""
    from pathlib import Path

    from issue_assistant.config.labels import load_labels
    from issue_assistant.config.sections import Config
    from issue_assistant.index.local import open_index
    from issue_assistant.tracker.asof import AsOfView
    from tests.moments import context_of

    view = AsOfView.for_issue(snap, 2)
    labels = load_labels(Path(__file__).resolve().parents[1] / "labels.toml")
    context = context_of(view, open_index(snap, tmp_path), labels, Config())
    return context.files()


def test_context_headings_hold_one_line_text_in_a_code_span(tmp_path):
    from datetime import timedelta

    from issue_assistant.tracker.models import Discussion, Issue, Release, Repository, User
    from issue_assistant.tracker.snapshot import Snapshot

    evil = "<img src=x onerror=alert(1)> <b>bold</b> `tick` ## heading\nnext"
    repo = Repository(
        full_name=REPO, fetched_at=NOW + timedelta(days=9), includes=["releases", "discussions"]
    )
    issues = [
        Issue(
            number=1,
            title=evil,
            body="parquet loading",
            user=User(login="a"),
            created_at=NOW,
            events=[],
            comments=[],
        ),
        Issue(
            number=2,
            title="parquet loading fails",
            body="parquet loading fails",
            user=User(login="b"),
            created_at=NOW + timedelta(days=2),
            events=[],
            comments=[],
        ),
    ]
    releases = [Release(tag=evil, name=evil, published_at=NOW)]
    discussions = [
        Discussion(
            number=5, title=evil + " parquet loading", body="parquet", category=evil, created_at=NOW
        )
    ]
    snap = Snapshot(repo, issues, releases=releases, discussions=discussions)
    files = context_files(snap, tmp_path)
    headings = [
        line
        for name in ("similar.md", "releases.md", "discussions.md")
        for line in files[name].splitlines()
        if line.startswith("## ") or line.startswith("- category")
    ]
    assert len(headings) == 4, headings  # an issue, a release, a discussion and its category
    for line in headings:
        tokens = MD.parseInline(line)[0].children or []
        kinds = {t.type for t in tokens}
        assert "html_inline" not in kinds and "strong_open" not in kinds, line
        assert not any("<" in t.content for t in tokens if t.type == "text"), line
        assert "\n" not in line
