"""The measures against hand-worked examples."""

from __future__ import annotations

from datetime import UTC, datetime

from issue_assistant.decision import Decision, Duplicate, Usage
from issue_assistant.evaluate.gold import Gold
from issue_assistant.evaluate.metrics import (
    Ratio,
    cost,
    duplicate_measures,
    issue_line,
    label_measure,
    percentile,
    question_measures,
    type_accuracy,
)
from issue_assistant.evaluate.results import IssueResult

T = datetime(2025, 1, 1, tzinfo=UTC)


def result(number: int, decision: Decision | None = None, **gold: object) -> IssueResult:
    labels = {"type": [], "area": [], "topic": [], "priority": []}
    labels.update(gold.pop("labels", {}))  # type: ignore[arg-type]
    return IssueResult(
        number=number,
        title=f"issue {number}",
        created_at=T,
        decision=decision or Decision(),
        gold=Gold(labels=labels, **gold),  # type: ignore[arg-type]
        proposed_sure=bool(gold.get("sure", False)),
    )


def test_ratio_prints_the_counts_behind_the_share():
    assert str(Ratio(31, 50)) == "0.62 (31/50)"
    assert str(Ratio(0, 0)) == "– (0/0)"
    assert Ratio(1, 4).share == 0.25


def test_label_precision_and_recall_over_issues_people_labelled():
    rows = [
        # right area, one wrong area: precision 1/2 here, recall 1/1
        result(1, Decision(areas=["cli", "docs"]), labels={"area": ["cli"]}),
        # missed one of two: recall 1/2
        result(2, Decision(areas=["index"]), labels={"area": ["index", "engine"]}),
        # people gave no area: the engine's area counts for neither
        result(3, Decision(areas=["cli"]), labels={"type": ["bug"]}),
    ]
    m = label_measure(rows, "area")
    assert m.issues == 2
    assert (m.precision.num, m.precision.den) == (2, 3)
    assert (m.recall.num, m.recall.den) == (2, 3)


def test_a_label_present_at_the_moment_counts_for_neither():
    # "bug" was on the issue when it was opened (an issue form's): not the engine's, not gold.
    row = result(1, Decision(type="bug", areas=["cli"]), labels={"area": ["cli"]}, present=["bug"])
    t = label_measure([row], "type")
    assert (t.issues, t.precision.den, t.recall.den) == (0, 0, 0)
    line = issue_line(row)
    assert line.right == ["cli"] and "bug" not in line.unscored + line.wrong


def test_type_accuracy_only_over_issues_with_exactly_one_type_label():
    rows = [
        result(1, Decision(type="bug"), labels={"type": ["bug"]}, type_gold="bug"),
        result(2, Decision(type="bug"), labels={"type": ["enhancement"]}, type_gold="enhancement"),
        # two type labels: no type_gold, not in the accuracy
        result(3, Decision(type="bug"), labels={"type": ["bug", "question"]}),
    ]
    assert type_accuracy(rows) == Ratio(1, 2)
    prec = label_measure(rows, "type").precision
    assert (prec.num, prec.den) == (2, 3)


def test_duplicates_recall_precision_false_rate_and_ceiling():
    dup = Duplicate(number=10)
    rows = [
        # found, and the original was among the candidates
        result(1, Decision(duplicate=dup, candidates=[10, 11]), duplicate_of=10, accept=[10]),
        # the engine named #10, which is itself a duplicate of #5: accepted via the chain
        result(2, Decision(duplicate=dup, candidates=[10]), duplicate_of=5, accept=[5, 10]),
        # missed; the original was not shown to the engine
        result(3, Decision(candidates=[7]), duplicate_of=8, accept=[8]),
        # proposed on an issue that was not a duplicate
        result(4, Decision(duplicate=Duplicate(number=3))),
        result(5, Decision()),
    ]
    d = duplicate_measures(rows)
    assert d["recall"] == Ratio(2, 3)
    assert d["precision"] == Ratio(2, 3)
    assert d["false_rate"] == Ratio(1, 2)
    assert d["ceiling"] == Ratio(2, 3)
    assert issue_line(rows[2]).duplicate == "missed #8"
    assert issue_line(rows[3]).duplicate == "✗ #3 (not a known duplicate)"
    assert issue_line(rows[0]).duplicate == "✓ #10"


def test_a_duplicate_of_an_unknown_original_counts_neither_right_nor_wrong():
    """Closed as a duplicate, original never named: out of recall, the false rate and precision."""
    rows = [
        result(1, Decision(duplicate=Duplicate(number=10)), duplicate_of=10, accept=[10]),
        result(2, Decision(duplicate=Duplicate(number=3)), duplicate_unknown=True),
        result(3, Decision(duplicate=Duplicate(number=4), candidates=[4])),
        result(4, Decision()),
    ]
    d = duplicate_measures(rows)
    assert d["precision"] == Ratio(1, 2)  # #1 right, #3 wrong; #2 not counted
    assert d["false_rate"] == Ratio(1, 2)
    assert d["recall"] == Ratio(1, 1)


def test_closed_with_a_duplicate_label_is_closed_as_a_duplicate():
    from issue_assistant.tracker.duplicates import closed_as_duplicate
    from issue_assistant.tracker.models import Issue, User

    def closed(labels: list[str], state: str = "closed") -> Issue:
        return Issue(
            number=1, title="t", user=User(login="u"), created_at=T, state=state, labels=labels
        )

    assert closed_as_duplicate(closed(["duplicate"]))
    assert closed_as_duplicate(closed(["status: Duplicate"]))
    assert not closed_as_duplicate(closed(["deduplicate-rows", "bug"]))
    assert not closed_as_duplicate(closed(["duplicate"], state="open"))


def test_sure_duplicates_are_measured_separately():
    dup = Duplicate(number=10)
    rows = [
        result(1, Decision(duplicate=dup), duplicate_of=10, accept=[10], sure=True),
        result(2, Decision(), duplicate_of=20, accept=[20], sure=True),
        result(3, Decision(duplicate=Duplicate(number=30)), duplicate_of=31, accept=[31]),
    ]
    # a wrong proposal of an open, triaged original
    wrong_sure = result(4, Decision(duplicate=Duplicate(number=40)))
    wrong_sure.proposed_sure = True
    d = duplicate_measures([*rows, wrong_sure])
    assert d["sure_recall"] == Ratio(1, 2)
    assert d["sure_precision"] == Ratio(1, 2)
    assert d["recall"] == Ratio(1, 3)


def test_questions_scored_only_where_the_type_asks_and_comments_are_known():
    ask = Decision(questions=["Which version?"])
    rows = [
        result(1, ask, question_counted=True, asked=True),  # both asked
        result(2, ask, question_counted=True, asked=False),  # engine only
        result(3, Decision(), question_counted=True, asked=True),  # maintainer only
        result(4, ask, question_counted=True, asked=None),  # comments unknown
        result(5, ask, question_counted=False, asked=True),  # type asks nothing
    ]
    precision, recall, unknown, not_scored = question_measures(rows)
    assert precision == Ratio(1, 2)
    assert recall == Ratio(1, 2)
    assert (unknown, not_scored) == (1, 1)
    assert issue_line(rows[0]).question == "✓ asked (maintainer asked)"
    assert issue_line(rows[3]).question == "asked (maintainer: unknown)"
    assert issue_line(rows[4]).question == "asked (not scored)"


def test_percentiles_and_cost():
    assert percentile([], 50) is None
    assert percentile([3, 1, 2, 4], 50) == 2
    assert percentile([float(i) for i in range(1, 21)], 95) == 19
    rows = [
        result(
            1,
            Decision(
                usage=Usage(
                    latency_s=1,
                    tokens_in=10,
                    tokens_out=2,
                    cost_usd=0.5,
                    tool_calls=3,
                    turns=2,
                    forced_submit=True,
                ),
                dropped=["nope"],
            ),
        ),
        result(2, Decision(usage=Usage(latency_s=3, tokens_in=5, tokens_out=1, turns=1))),
    ]
    rows[1].error = "engine: timed out"
    c = cost(rows)
    assert (c.latency_p50, c.latency_p95, c.latency_total) == (1, 3, 4)
    assert (c.tokens_in, c.tokens_out, c.cost_usd) == (15, 3, 0.5)
    assert (c.tool_calls, c.turns, c.forced_submits, c.dropped, c.failures) == (3, 3, 1, 1, 1)
    assert cost([result(1)]).cost_usd is None


def test_unknown_originals_count_for_neither_and_recall_at_k():
    from issue_assistant.evaluate.metrics import measure

    flagged = Decision(duplicate=Duplicate(number=3, reason="same", confidence=0.9))
    rows = [
        result(10, Decision(candidates=[4, 7, 1]), duplicate_of=7, accept=[7]),
        result(11, Decision(candidates=[9] * 5 + [2]), duplicate_of=2, accept=[2]),
        result(12, flagged, duplicate_unknown=True),  # a button-closed duplicate, original unknown
        result(13, Decision(), duplicate_unknown=True),
        result(14, Decision()),
    ]
    m = measure(rows)
    assert str(m.false_dup_rate) == "0.00 (0/1)"  # #12's proposal is not a false duplicate
    assert m.dup_recall.den == 2  # and #12, #13 are not misses
    assert (m.unknown_originals, m.unknown_flagged) == (2, 1)
    assert [str(m.recall_at[k]) for k in (1, 5, 10)] == ["0.00 (0/2)", "0.50 (1/2)", "1.00 (2/2)"]


def test_the_confidence_table_stops_where_nothing_would_be_proposed():
    """Coverage only falls as the confidence rises: the table ends at the first confidence
    that covers no issue, and a group no label of which reached the lowest says so in a line."""
    from issue_assistant.evaluate.labels import group_labels
    from issue_assistant.evaluate.report import render_report
    from issue_assistant.evaluate.results import RunHeader
    from issue_assistant.learn.confidence import THRESHOLDS

    def probable(number: int, area: float, topic: float, gold: str) -> IssueResult:
        probs = {"area": {"cli": area}, "topic": {"speed": topic}}
        decision = Decision(probabilities=probs)
        return result(number, decision, labels={"area": [gold], "topic": ["speed"]})

    rows = [probable(1, 0.5, 0.1, "cli"), probable(2, 0.1, 0.05, "docs")]
    lines = group_labels(rows, "area").thresholds
    assert [str(t.coverage) for t in lines[:-1]] == ["0.50 (1/2)"] * (len(lines) - 1)
    assert lines[-1].coverage.num == 0 and lines[-1].threshold > 0.5 >= lines[-2].threshold
    assert len(lines) < len(THRESHOLDS)
    assert [t.coverage.num for t in group_labels(rows, "topic").thresholds] == [0]
    header = RunHeader(repository="o/r", engine="similar", day=T.date(), requested=2, selected=2)
    text = render_report(header, rows)
    assert "If the engine proposed an area label whenever" in text
    assert f"No topic label's probability reached {THRESHOLDS[0]:.2f} on these issues" in text
    assert "If the engine proposed a topic label" not in text


def test_the_report_shows_what_was_measured_and_folds_the_thresholds_away():
    """A measure with nothing to count is no row of dashes: a line under the table says what
    was not measured and why; a group nobody labelled is no row either (a labelled group keeps
    its precision row when the engine proposed none of its labels); the table of every
    confidence and the thresholds sit in a collapsed section; an engine that spent no tokens
    shows no token or dollar rows."""
    from issue_assistant.evaluate.report import render_report
    from issue_assistant.evaluate.results import RunHeader

    rows = [
        result(
            1,
            Decision(type="bug", probabilities={"type": {"bug": 0.9}}),
            labels={"type": ["bug"]},
            type_gold="bug",
        ),
        result(
            2,
            Decision(type="bug", probabilities={"type": {"bug": 0.6}}),
            labels={"type": ["enhancement"]},
            type_gold="enhancement",
        ),
        result(3, Decision(type="bug"), labels={"type": ["bug"], "area": ["cli"]}, type_gold="bug"),
    ]
    header = RunHeader(repository="o/r", engine="similar", day=T.date(), requested=3, selected=3)
    text = render_report(header, rows)
    measures = text.split("## Measures")[1].split("## ")[0]
    assert measures.count("– (0/0)") == 1 and "| Type accuracy |" in measures
    assert "| Topic precision |" not in measures and "| Duplicate recall |" not in measures
    assert "| Area precision | the engine's area labels, on the 1 issue " in measures
    assert "| – (0/0) |\n| Area recall |" in measures
    assert (
        "Not measured, nothing to count on these issues: topic and priority labels (people "
        "gave none after opening); duplicates (none of these issues is a known one); questions."
    ) in measures
    groups = text.split("## Labels per group")[1].split("### ")[0]
    assert "| type | 3 |" in groups and "| area | 1 |" in groups and "| topic |" not in groups
    folded = text.split("<details><summary>Type: precision at every confidence")[1]
    assert folded.index("| Confidence ≥ |") < folded.index("</details>")
    cost = text.split("## Cost")[1].split("## ")[0]
    assert "Latency p50" in cost and "Tokens in" not in cost and "Dollars" not in cost


def test_why_a_group_proposed_nothing_reads_as_the_comment_does():
    """The report counts the issues where a group proposed nothing by why, in plain words: no
    configuration key, no floor."""
    from issue_assistant.decision import GroupOutcome
    from issue_assistant.evaluate.report import render_report
    from issue_assistant.evaluate.results import RunHeader

    def abstaining(n: int, why: str):  # noqa: ANN202
        outcome = GroupOutcome(mode="learned", abstained=why)
        decision = Decision(type="bug", label_groups={"area": outcome})
        return result(n, decision, labels={"type": ["bug"], "area": ["cli"]}, type_gold="bug")

    rows = [abstaining(1, "below floor"), abstaining(2, "below floor"), abstaining(3, "tier")]
    header = RunHeader(repository="o/r", engine="similar", day=T.date(), requested=3, selected=3)
    why = render_report(header, rows).split("No area label proposed on:")[1].split("#")[0]
    assert (
        "- 2 issue(s): its best guess was right too rarely at its confidence on the "
        "repository's history to propose"
    ) in why
    assert "- 1 issue(s): its best guess was less sure than the configuration asks" in why
    assert "[labels]" not in why and "min_precision" not in why and "floor" not in why
