"""The comment's voice: the part everyone on the issue reads (everything before "Why") says what is
proposed and how sure in plain words, never the code's vocabulary (configuration files and keys,
thresholds, vote shares, scores), and stays short. Checked over real issues of the shared
snapshots through the `similar` engine, and over hypothesis-built plans whose maintainer notes
are full of that vocabulary."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from issue_assistant.comment import (
    Evidence,
    IndexProgress,
    Outcome,
    Plan,
    render_comment,
    visible_part,
)
from issue_assistant.config.labels import load_labels
from issue_assistant.config.sections import Config
from issue_assistant.decision import TIER_WORDS, Duplicate, FileLink, LabelTier
from issue_assistant.engines import create
from issue_assistant.pipeline import replay
from tests.conftest import ROOT
from tests.strategies import examples

#: the code's vocabulary, which the visible part never carries (code spans removed first: they
#: quote a label name, an error line or a command, which are the issue's or the maintainer's)
INTERNAL = [
    re.compile(p, re.IGNORECASE)
    for p in (
        r"labels\.toml",
        r"config\.toml",
        r"\[[a-z_.]+\]\s*[a-z_]+",  # a `[section] key`
        r"\bfloor\b",
        r"\bthreshold",
        r"\bscores?\b",
        r"\bconfidence\b",
        r"\bprecision\b",
        r"% of the vote",
        r"\bneeds \d+\s*%",
        r"not (yet )?measured",
        r"\bmin_\w+",
        r"\b\d+\.\d+",  # a decimal: a probability, a score
        r"\b\d+\s*%",
        r"\bin 10 times\b",
        r"\bnone proposed\b|\bnot proposed\b",  # abstentions are narrated in "Why" only
    )
]
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.DOTALL)
VISIBLE_LINES = 12
WHY = "<details><summary>Why</summary>"


def internal_words(comment: str) -> list[str]:
    """The code's vocabulary found in the visible part of `comment`."""
    visible = visible_part(comment).replace("<!-- issue-assistant -->", "")
    text = CODE_SPAN.sub("`…`", visible)
    return [m.group(0) for p in INTERNAL for m in p.finditer(text)]


def visible_lines(comment: str) -> int:
    lines = visible_part(comment).splitlines()
    return sum(1 for ln in lines if ln.strip() and ln.strip() != "<!-- issue-assistant -->")


def test_the_vocabulary_check_catches_the_old_voice():
    """The patterns find what the comment used to say above the fold."""
    old = (
        "<!-- issue-assistant -->\n### Triage proposal\n\nLabels for type, area and topic (the "
        "groups labels.toml configures): type `enhancement`; area: none, the best guess "
        "`streaming` is right 0 in 10 times at its confidence, under the floor of 6 in 10.\n"
        "area: none, similar earlier issues do not agree (`area/docs` has 8% of the vote, needs "
        "40%). Learned from 48 labelled issues; confidence not yet measured.\n"
        "**Possible duplicate of #7** (confidence 0.80): same crash\n"
    )
    found = {w.lower() for w in internal_words(old)}
    for word in ("labels.toml", "floor", "confidence", "% of the vote", "needs 40%", "0.80"):
        assert word in found, word
    assert internal_words(old.replace("0.80", "`0.80`")) != []  # the rest still found


def _check(comment: str) -> None:
    assert comment.count(WHY) == 1, comment
    assert internal_words(comment) == [], visible_part(comment)
    assert visible_lines(comment) <= VISIBLE_LINES, visible_part(comment)
    visible = visible_part(comment)
    # How sure, in the one scale of words, and nothing else in parentheses after a label.
    for word in re.findall(r"` \(([^)]*)\)", visible.split("\n\n")[1]):
        assert word in TIER_WORDS.values(), visible


@pytest.mark.parametrize(
    ("snapshot", "labels", "count", "least"),
    [
        ("hf_snapshot", "bench/hf-datasets.labels.toml", 40, 20),
        # most poetry issues come typed by their form: fewer comments (issue 25, section 3)
        ("poetry_snapshot", "tests/data/evaluate/poetry.labels.toml", 40, 3),
    ],
)
def test_recent_real_issues_speak_plainly_above_the_fold(
    request, tmp_path, snapshot, labels, count, least
):
    from issue_assistant.index.local import open_index

    snap = request.getfixturevalue(snapshot)
    index = open_index(snap, tmp_path / "cache")
    config = Config()
    label_set = load_labels(ROOT / labels)
    engine = create("similar", config, label_set)
    issues = sorted(
        (i for i in snap.all_issues() if not i.is_pull_request), key=lambda i: i.created_at
    )[-count:]
    shown = 0
    for issue in issues:
        analysis = replay(
            snap, issue.number, index=index, labels=label_set, config=config, engine=engine
        )
        if analysis.plan.is_empty:
            continue  # no comment is posted
        shown += 1
        _check(analysis.comment)
        # the reasons for what was not proposed are in "Why", in plain words too
        why = analysis.comment.split(WHY)[1]
        for note in analysis.plan.why:
            assert "[labels]" not in note and "% of the vote" not in note and note in why
    assert shown >= least  # the check read real comments


WORDS = st.sampled_from(
    ["the", "crash", "when", "loading", "a", "file", "with", "two", "columns", "fails", "again"]
)
SENTENCE = st.lists(WORDS, min_size=2, max_size=12).map(lambda ws: " ".join(ws).capitalize())
# What maintainers may read in "Why", and nobody above it.
JARGON = (
    "labels.toml [labels] min_precision: floor 0.60, threshold 0.62, score 0.91, 8% of the vote, "
    "needs 40%, confidence not yet measured"
)
LABELS = ["bug", "enhancement", "area/solver", "area/docs", "good first issue", "p1"]


@st.composite
def plans(draw) -> Plan:
    names = draw(st.lists(st.sampled_from(LABELS), unique=True, max_size=4))
    tiers, confidence = {}, {}
    for name in names:
        p = draw(st.floats(0, 1))
        if draw(st.booleans()):
            measured = draw(st.booleans())
            tiers[name] = LabelTier(
                tier=draw(st.sampled_from(["high", "likely", "possible"])),
                precision=draw(st.floats(0, 1)) if measured else None,
                correct=draw(st.integers(0, 50)),
                proposals=draw(st.integers(0, 50)),
                source=draw(st.sampled_from(["learned", "vote"])),
            )
        if draw(st.booleans()):
            confidence[name] = p
    duplicate = None
    if draw(st.booleans()):
        number = draw(st.integers(1, 9999))
        head = draw(st.sampled_from([f"Same problem as #{number} (open): ", ""]))
        duplicate = Duplicate(
            number=number, reason=head + draw(SENTENCE), confidence=draw(st.floats(0, 1))
        )
    evidence = [
        Evidence(
            number=n,
            title=JARGON,
            state="open",
            shared=JARGON,
            relation=draw(st.sampled_from(["", "related", "duplicate"])),
        )
        for n in draw(st.lists(st.integers(1, 9999), unique=True, max_size=5))
    ]
    status = draw(st.sampled_from(["pending", "pending", "approved", "dismissed"]))
    history = []
    if status != "pending":
        action = "approved" if status == "approved" else "dismissed"
        changes = ["added labels bug", "asked the reporter"] if action == "approved" else []
        history = [
            Outcome(
                action=action, actor="maria", at=datetime(2025, 1, 2, tzinfo=UTC), changes=changes
            )
        ]
    return Plan(
        repository="o/r",
        issue=10_000,
        status=status,
        history=history,
        reporter=draw(st.sampled_from(["alice", "bob-smith", "dependabot[bot]"])),
        created_at=datetime(2025, 1, 1, tzinfo=UTC),
        type=names[0] if names and draw(st.booleans()) else None,
        areas=[n for n in names[1:] if n.startswith("area/")],
        topics=[n for n in names[1:] if n == "good first issue"],
        priority="p1" if "p1" in names[1:] else None,
        duplicate=duplicate,
        questions=draw(st.lists(SENTENCE.map(lambda s: s + "?"), max_size=3)),
        summary=draw(st.sampled_from(["", JARGON])),
        engine=draw(st.sampled_from(["similar", "anthropic"])),
        confidence=confidence,
        tiers=tiers,
        why=draw(st.lists(st.just(JARGON), max_size=4)),
        evidence=evidence,
        preset=draw(st.sampled_from([{}, {"kind/bug": "template"}, {"area/docs": "issue"}])),
        likely_files=[FileLink(path="src/a.py", why=[JARGON], confidence=0.5)]
        if draw(st.booleans())
        else [],
        index_progress=IndexProgress(searched=12, of_about=400) if draw(st.booleans()) else None,
    )


@examples(150)  # one comment rendered per example: cheap
@given(plans())
def test_built_plans_keep_the_jargon_in_why(plan):
    comment = render_comment(plan)
    _check(comment)
    why = comment.split(WHY)[1]
    if plan.why or plan.summary:
        assert "floor 0.60" in why  # the maintainer's detail is there, folded
    if plan.duplicate is not None:
        visible = visible_part(comment)
        assert f"**Possibly the same problem as #{plan.duplicate.number}**" in visible
        assert visible.count(f"#{plan.duplicate.number}") == 1  # said once, not repeated
    for name, word in plan.words().items():
        assert f"`{name}` ({word})" in visible_part(comment)


def test_one_scale_of_words_in_the_comment_the_backlog_report_and_the_outputs():
    from types import SimpleNamespace

    from issue_assistant.action import render_summary
    from issue_assistant.backlog.report import outputs, render_run
    from issue_assistant.backlog.run import BacklogRun, Item

    plan = Plan(
        repository="o/r",
        issue=5,
        reporter="alice",
        created_at=datetime(2025, 1, 1, tzinfo=UTC),
        type="bug",
        areas=["area/solver", "area/docs"],
        confidence={"bug": 0.4, "area/solver": 0.95, "area/docs": 0.75},
        tiers={"bug": LabelTier(tier="high", precision=0.95, correct=19, proposals=20)},
        duplicate=Duplicate(
            number=3, reason="Same problem as #3 (open): both crash", confidence=0.7
        ),
    )
    # the measured tier wins over the number; an unmeasured confidence is put on the same scale
    assert plan.words() == {
        "bug": "very likely",
        "area/solver": "very likely",
        "area/docs": "likely",
    }
    shown = "`bug` (very likely) · `area/solver` (very likely) · `area/docs` (likely)"
    comment = render_comment(plan)
    assert f"**Proposed:** {shown}\n" in visible_part(comment)
    run = BacklogRun(repository="o/r", writes="dry-run", limit=5, per_day=5, groups=["type"])
    run.items.append(Item(number=5, title="Crash", action="would post", plan=plan, comment=comment))
    report = render_run(run)
    assert f"Labels: {shown}. Duplicate: possibly #3." in report
    assert "0.7" not in report.split("<details>")[0]  # the score stays in the plan and "Why"
    assert outputs(run)["items"][0]["confidence_words"] == plan.words()
    result = SimpleNamespace(
        skipped=None,
        number=5,
        plan=plan,
        action="would post",
        comment_url=None,
        analysis=SimpleNamespace(decision=SimpleNamespace(usage=SimpleNamespace(latency_s=0.1))),
        error=None,
        comment=comment,
    )
    summary = render_summary(
        command="analyze",
        writes="dry-run",
        result=result,
        done=[],
        repository="o/r",
    )
    assert f"| Labels | {shown} |" in summary and "| Duplicate | possibly #3 |" in summary
