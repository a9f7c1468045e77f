"""A repository whose issue forms set the type (poetry: every bug arrives as `kind/bug`):
`evaluate` qualifies those issues where there is something to measure and counts why the others
did not qualify; `analyze` looks for what is still missing."""

from __future__ import annotations

from issue_assistant.config.labels import load_labels
from issue_assistant.config.sections import Config
from issue_assistant.engines import create
from issue_assistant.evaluate.selection import FORM_ONLY, NO_LATER_LABEL, select, why_not
from issue_assistant.pipeline import replay
from issue_assistant.preset import opened_with
from tests.conftest import ROOT

LABELS = ROOT / "tests" / "data" / "evaluate" / "poetry.labels.toml"
BOT = "github-actions[bot]"


def test_evaluate_counts_why_issues_did_not_qualify(poetry_snapshot):
    labels = load_labels(LABELS)
    selection = select(poetry_snapshot, labels, BOT, limit=200)
    closed = [i for i in poetry_snapshot.all_issues() if i.state == "closed"
              and not i.is_pull_request]  # fmt: skip
    assert selection.qualified + sum(selection.not_qualified.values()) == len(closed)
    assert set(selection.not_qualified) <= {FORM_ONLY, NO_LATER_LABEL}
    assert selection.not_qualified[FORM_ONLY] > 0
    # form-typed issues a maintainer commented on qualify, though nobody labelled them later
    repo = poetry_snapshot.repository
    typed = [
        i for i in closed
        if "kind/bug" in (opened_with(i) or set())
        and any(repo.is_maintainer(c.user.login, c.author_association) for c in i.comments or [])
        and set(i.labels) <= {"kind/bug", "status/triage"}
    ]  # fmt: skip
    assert typed
    assert all(why_not(poetry_snapshot, i, labels, BOT) is None for i in typed)
    assert {i.number for i in typed} <= set(selection.numbers)


def test_analyze_on_form_typed_bugs_asks_only_for_what_the_form_left_empty(
    poetry_snapshot, poetry_index
):
    """The newest form-typed bugs: the type is never proposed again, and a question is asked
    only where the field that answers it was left empty and nothing else says it."""
    labels = load_labels(LABELS)
    config = Config()
    engine = create("similar", config, labels)
    bugs = sorted(
        (i for i in poetry_snapshot.all_issues()
         if "kind/bug" in (opened_with(i) or set())),
        key=lambda i: -i.number,
    )[:12]  # fmt: skip
    asked = 0
    for issue in bugs:
        d = replay(poetry_snapshot, issue.number, index=poetry_index, labels=labels,
                   config=config, engine=engine).decision  # fmt: skip
        assert d.type is None, issue.number
        version_q = [q for q in d.questions if "version" in q.lower()]
        body = issue.body or ""
        has_version = "### Poetry Version" in body and "Poetry Version\n\n_No" not in body
        assert not (version_q and has_version), issue.number
        asked += bool(d.questions)
    assert asked < len(bugs)  # the form's answers give the version on most
