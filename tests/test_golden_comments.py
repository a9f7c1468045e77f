"""The reference comments in docs/comments/ are what the code renders today: a change of the
comment's voice is a reviewed diff. Write them again after an intended change with
`python -m tests.golden_comments` (see tests/golden_comments.py)."""

from __future__ import annotations

import pytest

from issue_assistant.comment import extract_plan, visible_part
from tests.golden_comments import GOLDEN, OUT, render_all


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    return render_all(tmp_path_factory.mktemp("golden-cache"))


@pytest.mark.parametrize("name", list(GOLDEN))
def test_the_reference_comment_is_what_the_code_renders(rendered, name):
    kept = (OUT / name).read_text(encoding="utf-8")
    assert rendered[name] == kept, (
        f"docs/comments/{name} differs from the comment rendered now: if the change is intended, "
        "run `python -m tests.golden_comments` and review the diff"
    )


def test_the_references_show_what_they_are_meant_to(rendered):
    bug = rendered["bug-with-duplicate.md"]
    plan = extract_plan(bug)
    assert plan is not None and plan.duplicate is not None and plan.duplicate.number == 10283
    assert plan.preset == {"kind/bug": "template"}
    again = "the same reporter filed the same report minutes earlier"
    line = f"**Possibly the same problem as #10283** (open): {again}.\n"
    assert line in visible_part(bug) and "SSL_CERT_FILE" not in visible_part(bug)
    # what the two share is behind the details, for a maintainer who checks
    assert "`SSLError`" in bug.split("<summary>Why</summary>")[1]
    assert "`SSL_CERT_FILE`" in bug.split("<summary>Why</summary>")[1]
    asked = rendered["bug-with-questions.md"]
    plan = extract_plan(asked)
    assert plan is not None and plan.type == "bug" and len(plan.questions) == 2
    assert "@LinXin04, could you tell us:" in visible_part(asked)
    feature = extract_plan(rendered["feature-request.md"])
    assert feature is not None and feature.type == "enhancement" and not feature.questions
    docs = extract_plan(rendered["documentation-report.md"])
    assert docs is not None and docs.type == "documentation" and not docs.questions


@pytest.mark.parametrize("name", list(GOLDEN))
def test_every_reference_is_a_comment_the_action_posts(rendered, name):
    """The Action posts nothing when there is nothing to propose: no reference shows such a
    comment."""
    plan = extract_plan(rendered[name])
    assert plan is not None and not plan.is_empty
