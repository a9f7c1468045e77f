"""The questions' second half against the fake GitHub (the real PyGithub client over HTTP): the
reporter answers approved questions; while something is still missing nothing happens, then the
assistant's comment proposes taking the needs-info label off, pending a maintainer's approval."""

from __future__ import annotations

from issue_assistant import cli
from issue_assistant.comment import extract_plan
from issue_assistant.decision import Decision
from tests.fakegithub.fixtures import TOKEN
from tests.test_action import (
    BOT,
    PENDING,
    REPO,
    REPORTER,
    analyze,
    apply,
    assistant_comment,
    event,
    outputs,
)
from tests.test_action import gh as gh  # noqa: F401 - the fixture
from tests.test_action import vcr_config as vcr_config  # noqa: F401 - the fixture
from tests.test_approve import DATA

ASKS = """
[[type.ask]]
what = "the version"
question = "Which version are you using?"
requires = "version"
"""
QUESTION = "Which version are you using?"


def labels_file(tmp_path):
    text = (DATA / "labels.toml").read_text(encoding="utf-8")
    # the asks go under the first [[type]] (`bug`)
    head, sep, rest = text.partition('description = "Something is broken"\n')
    path = tmp_path / "labels.toml"
    path.write_text(head + sep + ASKS + rest, encoding="utf-8")
    return str(path)


def reply(gh, tmp_path, body: str, login: str = REPORTER):
    """The reporter (or `login`) comments: the comment on the fake GitHub and its event."""
    gh.add_comment(3, body, login)

    def change(data: dict) -> None:
        data["comment"]["body"] = body
        data["comment"]["user"]["login"] = login
        data["issue"]["labels"] = [{"name": n} for n in gh.issues[3].labels]

    return event(tmp_path, "issue_comment/created.payload.json", change)


def test_the_reporters_answer_leads_to_a_proposal_to_remove_needs_info(
    gh, tmp_path, fake_engine, monkeypatch, capsys
):
    labels = labels_file(tmp_path)
    decision = Decision(type="bug", questions=[QUESTION], summary="A typo.")
    assert analyze(gh, tmp_path, fake_engine, decision, labels=labels) == 0
    assert extract_plan(assistant_comment(gh).body).questions == [QUESTION]
    path = reply(gh, tmp_path, "/assistant approve", "Codertocat")
    assert apply(gh, tmp_path, "issue_comment", path, labels=labels) == 0
    assert "needs info" in gh.issues[3].labels and PENDING not in gh.issues[3].labels
    # the questions stay in view in the approved comment; no second comment repeats them
    ours = [c for c in gh.comments.values() if c.user == BOT]
    assert len(ours) == 1
    visible = ours[0].body.split("<details><summary>The proposal</summary>")[0]
    assert "Approved by `Codertocat`" in visible
    assert f"@{REPORTER}, could you tell us:\n\n- {QUESTION}\n" in visible

    # someone else's comment, and a reply that does not give the version: nothing is written
    for body, login in [("Same here, version 1.2.3", "hubot"), ("I don't know.", REPORTER)]:
        gh.clear_requests()
        path = reply(gh, tmp_path, body, login)
        assert apply(gh, tmp_path, "issue_comment", path, labels=labels) == 0
        assert gh.writes == [], body
    assert "still missing" in (tmp_path / "summary.md").read_text()

    # the answer: the command line's dry run says what it would do, and writes nothing
    path = reply(gh, tmp_path, "It happens with version 2.3.1 on Linux.")
    gh.clear_requests()
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    monkeypatch.setenv("GITHUB_API_URL", gh.base_url)
    config = tmp_path / "config.toml"
    args = ["apply", "-R", REPO, "--labels", labels, "--config", str(config)]
    assert cli.main(args) == 0
    out = capsys.readouterr().out
    assert "#3: proposed (the reporter answered: proposed to remove 'needs info')" in out
    assert gh.writes == []
    # the Action's run on the reporter's comment: the comment becomes a new proposal
    gh.clear_requests()
    assert apply(gh, tmp_path, "issue_comment", path, labels=labels) == 0
    plan = extract_plan(assistant_comment(gh).body)
    assert plan.status == "pending" and plan.remove == ["needs info"] and plan.questions == []
    assert plan.history[-1].action == "approved"  # the first approval stays on record
    body = assistant_comment(gh).body
    assert "**Proposed:** remove `needs info`" in body
    assert [m for m, _, _ in gh.issue_writes] == ["PATCH", "POST"]  # the comment, the label
    assert sorted(gh.issues[3].labels) == sorted(["bug", "needs info", PENDING])
    assert "needs info" in gh.issues[3].labels  # nothing removed before approval
    assert any(r["status"] == "proposed" for r in __import__("json").loads(
        outputs(tmp_path)["decision"]))  # fmt: skip

    # the earlier approval does not count for the new text; a maintainer's 👍 does
    gh.clear_requests()
    assert apply(gh, tmp_path, labels=labels) == 0
    assert "needs info" in gh.issues[3].labels
    gh.add_reaction(assistant_comment(gh).id, "maria", "+1")
    assert apply(gh, tmp_path, labels=labels) == 0
    assert gh.issues[3].labels == ["bug"]
    plan = extract_plan(assistant_comment(gh).body)
    assert plan.status == "approved" and "removed `needs info`" in plan.history[-1].changes
    # and nothing more after that
    gh.clear_requests()
    path = reply(gh, tmp_path, "Thanks!")
    assert apply(gh, tmp_path, "issue_comment", path, labels=labels) == 0
    assert gh.writes == []
    assert not [c for c in gh.comments.values() if c.user == BOT and "Proposed: remove" in c.body
                and c.id != assistant_comment(gh).id]  # fmt: skip


def test_an_answer_given_while_the_proposal_waited_is_not_asked_again(gh, tmp_path, fake_engine):
    """The pending comment shows the questions: a reporter who answers before a maintainer
    approves gets neither the needs-info label nor the questions again; a reply that does not
    answer leaves them asked."""
    labels = labels_file(tmp_path)
    decision = Decision(type="bug", questions=[QUESTION], summary="A typo.")
    assert analyze(gh, tmp_path, fake_engine, decision, labels=labels) == 0
    reply(gh, tmp_path, "It happens with version 2.3.1 on Linux.")
    path = reply(gh, tmp_path, "/assistant approve", "Codertocat")  # not an answer
    assert apply(gh, tmp_path, "issue_comment", path, labels=labels) == 0
    assert "needs info" not in gh.issues[3].labels and "bug" in gh.issues[3].labels
    plan = extract_plan(assistant_comment(gh).body)
    assert plan.status == "approved"
    assert "asked nothing: the reporter had already answered the questions" in (
        plan.history[-1].changes
    )
    assert "could you tell us" not in assistant_comment(gh).body.split("<details>")[0]


def test_a_reply_that_does_not_answer_leaves_the_questions_asked(gh, tmp_path, fake_engine):
    labels = labels_file(tmp_path)
    decision = Decision(type="bug", questions=[QUESTION], summary="A typo.")
    assert analyze(gh, tmp_path, fake_engine, decision, labels=labels) == 0
    reply(gh, tmp_path, "Thanks for looking!")
    path = reply(gh, tmp_path, "/assistant approve", "Codertocat")
    assert apply(gh, tmp_path, "issue_comment", path, labels=labels) == 0
    assert "needs info" in gh.issues[3].labels
    assert f"@{REPORTER}, could you tell us:" in assistant_comment(gh).body
