"""Issue forms as fields: parsing real form bodies of the shared snapshots, questions only for
what is missing (a version in the title counts), a form's kind answer in the decision, and
`init` drafting which field answers which question."""

from __future__ import annotations

import textwrap
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from issue_assistant import asking, forms
from issue_assistant.config.labels import Ask, LabelsConfig
from issue_assistant.config.sections import Config
from issue_assistant.decision import Decision, validate
from issue_assistant.engines import create
from issue_assistant.pipeline import replay
from issue_assistant.tracker.models import Comment, Issue, User
from tests.conftest import POETRY, ROOT
from tests.strategies import examples

VERSION = Ask(what="the version", question="Which version?", requires="version",
              field="Poetry Version")  # fmt: skip
STEPS = Ask(what="steps", question="Which steps?", detect=["reproduc"],
            field="Example pyproject.toml")  # fmt: skip
LOGS = Ask(what="output", question="What output?", detect=["Traceback"],
           field="Poetry Runtime Logs",
           prefilled=["Paste the output of 'poetry -vvv <command>', over this line."])  # fmt: skip
T0 = datetime(2025, 3, 1, tzinfo=UTC)


def _issue(title: str, body: str, comments: list[Comment] = (), number: int = 1) -> Issue:  # type: ignore[assignment]
    return Issue(number=number, title=title, body=body, user=User(login="rep"), created_at=T0,
                 labels=["kind/bug"], comments=list(comments))  # fmt: skip


def _comment(login: str, hours: int, body: str = "ok", assoc: str | None = None) -> Comment:
    return Comment(user=User(login=login), created_at=T0 + timedelta(hours=hours), body=body,
                   author_association=assoc)  # fmt: skip


def test_every_form_body_of_poetry_parses_with_its_empty_answers(poetry_snapshot):
    issues = [i for i in poetry_snapshot.all_issues() if not i.is_pull_request]
    parsed = {i.number: forms.parse(i.body) for i in issues}
    assert sum(bool(a) for a in parsed.values()) >= 100  # nearly every report is a form's
    bug = parsed[10308]  # the bug form: a version given, the pyproject left empty
    assert bug.get("Poetry Version").text == "2.1.1"
    assert bug.get("poetry version").choice  # one short line
    assert bug.get("Example pyproject.toml").empty  # an empty ```TOML block
    assert not bug.get("Poetry Runtime Logs").empty  # the old form's prefilled text, unknown here
    assert "### " not in bug.text() and "Poetry Version\n2.1.1" in bug.text()
    assert "Example pyproject.toml" not in bug.text()  # an empty field says nothing
    docs = parsed[10210]
    assert docs.get("Issue Kind").text == "Missing documentation"
    assert [a.label for a in docs.given()] == ["Issue Kind", "Existing Link", "Description"]
    # `_No response_` is an empty answer wherever it is
    no_response = [i for i in issues if forms.NO_RESPONSE in (i.body or "")]
    assert no_response
    for i in no_response:
        assert forms.NO_RESPONSE not in parsed[i.number].text()


def test_hf_form_bodies_and_plain_bodies(hf_snapshot):
    issues = [i for i in hf_snapshot.all_issues() if not i.is_pull_request]
    with_no_response = [i for i in issues if forms.NO_RESPONSE in (i.body or "")]
    assert with_no_response
    for i in with_no_response:
        answers = forms.parse(i.body)
        assert answers, i.number
        assert any(a.empty for a in answers.fields.values())
    plain = [i for i in issues if (i.body or "").strip() and "### " not in (i.body or "")]
    assert plain and not any(forms.parse(i.body) for i in plain[:50])


def test_checkboxes_and_a_heading_inside_code_are_not_fields():
    body = textwrap.dedent("""\
        ### Checks

        - [x] I searched the issues
        - [ ] I read the docs

        ### Description

        ```
        ### not a field
        ```
        - [ ] a task list in prose stays text
        """)
    answers = forms.parse(body)
    assert list(answers.fields) == ["checks", "description"]
    assert answers.get("Checks").checked == ("I searched the issues",)
    assert answers.get("Checks").kind == "checkboxes"
    assert "a task list" in answers.get("Description").text
    assert not forms.parse("Hello\n\n### Description\n\nx")  # not a form's body


FORM_YML = """\
name: Bug
labels: ["kind/bug", "status/triage"]
body:
  - type: markdown
    attributes:
      value: Thanks
  - type: dropdown
    id: kind
    attributes:
      label: Issue Kind
      options: ["Missing documentation", "Other"]
  - type: input
    id: version
    attributes:
      label: Poetry Version
  - type: textarea
    id: logs
    attributes:
      label: Poetry Runtime Logs
      value: "Paste the output here, over this line."
"""


def test_the_checkouts_forms_give_ids_types_and_prefilled_text(tmp_path):
    folder = tmp_path / ".github" / "ISSUE_TEMPLATE"
    folder.mkdir(parents=True)
    (folder / "bug.yml").write_text(FORM_YML)
    (folder / "config.yml").write_text("blank_issues_enabled: false\n")
    (folder / "old.md").write_text("---\nname: old\n---\n")
    (found,) = forms.read_forms(tmp_path)
    assert found.labels == ("kind/bug", "status/triage")
    assert [(f.id, f.kind) for f in found.fields] == [
        ("kind", "dropdown"), ("version", "input"), ("logs", "textarea")]  # fmt: skip
    body = (
        "### Issue Kind\n\nOther\n\n### Poetry Version\n\n_No response_\n\n"
        "### Poetry Runtime Logs\n\nPaste the output here, over this line.\n"
    )
    assert forms.form_of(body, [found]) is found
    answers = forms.parse(body, found)
    assert answers.get("Issue Kind").kind == "dropdown"
    assert answers.get("Poetry Version").empty
    assert answers.get("Poetry Runtime Logs").empty  # left as the form prefilled it
    drafted = forms.draft_fields([], [found])
    assert drafted["the version"].label == "Poetry Version"
    assert drafted["what happened"] == forms.DraftedField(
        "Poetry Runtime Logs", ("Paste the output here, over this line.",))  # fmt: skip


@pytest.mark.parametrize(
    ("title", "given"),
    [
        ("Poetry 2.1 hides the build script's output", True),
        ("Regression in v1.2.3", True),
        ("lock fails since 1.8.5", True),
        ("lock fails with a private source", False),
    ],
)
def test_a_version_in_the_title_counts(title, given):
    body = "### Description\n\nIt fails.\n\n### Poetry Version\n\n_No response_\n"
    still = asking.missing([VERSION], _issue(title, body))
    assert (still == []) is given


def test_an_answered_field_counts_and_a_heading_or_prefilled_text_does_not():
    body = (
        "### Description\n\nIt fails.\n\n### Example pyproject.toml\n\n```TOML\n\n```\n\n"
        "### Poetry Runtime Logs\n\n```\nPaste the output of 'poetry -vvv <command>', over "
        "this line.\n```\n\n### Steps to reproduce\n\n_No response_\n"
    )
    issue = _issue("install fails", body)
    # the empty pyproject and the heading "Steps to reproduce" say nothing; nor the prefilled logs
    assert asking.missing([STEPS, LOGS], issue) == [STEPS, LOGS]
    answered = body.replace("```TOML\n\n```", "```TOML\n[tool.poetry]\n```")
    answered = answered.replace("Paste the output", "Traceback: boom. Paste the output")
    assert asking.missing([STEPS, LOGS], _issue("install fails", answered)) == []
    # the reporter's reply counts too
    reply = _comment("rep", 1, "To reproduce: run poetry lock")
    assert asking.missing([STEPS], _issue("install fails", body, [reply])) == []


def test_no_question_where_people_already_talk():
    def maintainer(login: str, association: str | None) -> bool:
        return login == "keeper"

    body = "### Description\n\nIt fails.\n\n### Poetry Version\n\n_No response_\n"
    labels = LabelsConfig.model_validate({"type": [{"name": "kind/bug", "ask": [
        VERSION.model_dump(exclude_defaults=True)]}]})  # fmt: skip
    plain = _issue("it fails", body)
    assert asking.kept_questions(["Which version?"], labels, ["kind/bug"], plain, maintainer)[0]
    cases = {
        "a maintainer": [_comment("keeper", 1)],
        "the reporter has already answered": [_comment("other", 1), _comment("rep", 2)],
        "a discussion of 8": [_comment(f"u{n}", n) for n in range(8)],
    }
    for words, comments in cases.items():
        kept, why = asking.kept_questions(
            ["Which version?"], labels, ["kind/bug"], _issue("it fails", body, comments),
            maintainer,
        )  # fmt: skip
        assert kept == [] and words in why[0], words
    # a maintainer who opens an issue is not asked for what a report needs
    mine = _issue("it fails", body).model_copy(update={"user": User(login="keeper")})
    kept, why = asking.kept_questions(["Which version?"], labels, ["kind/bug"], mine, maintainer)
    assert kept == [] and why == ["No question: a maintainer opened the issue."]
    # an engine's question for what the form already gives is dropped, with why
    given = body.replace("_No response_", "2.1.1")
    decision = Decision(questions=["Which version?", "Does it happen on Windows?"])
    out = validate(decision, labels, None, _issue("it fails", given))
    assert out.questions == ["Does it happen on Windows?"]
    assert any("the version" in w and "Poetry Version" in w for w in out.why)


def test_a_form_kind_answer_decides_on_the_documentation_request(
    poetry_snapshot, poetry_index, tmp_path
):
    """poetry #10210: filed with the documentation form ("Missing documentation"), `area/docs`
    came with it, "Poetry 2.1" is in the title. No bug type and no bug questions are proposed,
    so nothing at all (no comment is posted); the why names the form's answer."""
    from issue_assistant.cli import main

    assert main(["init", "--snapshot", str(POETRY), "--dir", str(tmp_path)]) == 0
    from issue_assistant.config.labels import load_labels
    from issue_assistant.config.sections import load_config

    labels = load_labels(tmp_path / ".github" / "issue-assistant" / "labels.toml")
    drafted = load_config(tmp_path / ".github" / "issue-assistant" / "config.toml")
    assert drafted.backlog.groups == ["type", "area"]  # what the 45 open issues lack
    asks = labels.type_label("kind/bug").ask
    assert [a.field for a in asks] == [
        "Poetry Version", "Example pyproject.toml", "Poetry Runtime Logs"]  # fmt: skip
    # the drafted version ask takes a version in the title, in its common forms
    for title in ("Poetry 2.1 hides output", "broken in v1.2.3", "since 1.8.5 it fails"):
        assert asking.missing(asks[:1], _issue(title, "### Description\n\nIt fails.")) == []
    assert asking.missing(asks[:1], _issue("it fails", "### Description\n\nIt fails."))
    config = Config()
    engine = create("similar", config, labels)
    analysis = replay(poetry_snapshot, 10210, index=poetry_index, labels=labels, config=config,
                      engine=engine)  # fmt: skip
    d = analysis.decision
    assert d.type is None and d.questions == []
    assert analysis.plan.is_empty  # nothing to propose: the Action posts no comment
    assert any("'Missing documentation'" in w and "`area/docs`" in w for w in d.why)
    # a kind answer naming a type label proposes it, from the form
    body = "### Issue Kind\n\nFeature request\n\n### Description\n\nAdd a flag."
    new = _issue("Add a flag", body, number=99).model_copy(update={"labels": []})
    from issue_assistant.formlabels import kind_labels

    assert [n for _, n in kind_labels(forms.parse(new.body), labels)] == ["kind/feature"]


def test_the_context_shows_the_form_answers(tmp_path, capsys):
    """What the LLM engines read: the form's answers as fields, the empty ones named."""
    from issue_assistant.cli import main

    labels = ROOT / "tests" / "data" / "evaluate" / "poetry.labels.toml"
    ctx = tmp_path / "ctx"
    args = ["analyze", "--snapshot", str(POETRY), "--issue", "10308", "--labels", str(labels),
            "--context-dir", str(ctx), "--cache-dir", str(tmp_path / "cache")]  # fmt: skip
    assert main(args) == 0
    text = (ctx / "issue.md").read_text(encoding="utf-8")
    assert "## The issue form's answers" in text
    assert "- `Poetry Version`: `2.1.1`" in text
    assert "Left empty by the reporter: `Example pyproject.toml`." in text
    capsys.readouterr()


def test_the_checkouts_form_types_the_answers_the_engines_read(tmp_path, poetry_snapshot):
    """With the form in the checkout, its prefilled text is an empty answer and its dropdown a
    kind, for the questions and for validation (a plain body parse cannot know either)."""
    from issue_assistant.context import Context
    from issue_assistant.learn.learned import Beside
    from issue_assistant.moment import Moment

    folder = tmp_path / ".github" / "ISSUE_TEMPLATE"
    folder.mkdir(parents=True)
    (folder / "bug.yml").write_text(FORM_YML)
    body = (
        "### Issue Kind\n\nOther\n\n### Poetry Version\n\n2.1.1\n\n"
        "### Poetry Runtime Logs\n\nPaste the output here, over this line.\n"
    )
    new = _issue("it fails", body)
    at = Moment(poetry_snapshot, None, LabelsConfig(), Beside())  # type: ignore[arg-type]
    ctx = Context(issue=new, moment=at, labels=LabelsConfig(), project="", as_of=T0,
                  checkout=tmp_path)  # fmt: skip
    typed = ctx.form_answers()
    assert typed.get("Poetry Runtime Logs").empty and typed.get("Issue Kind").kind == "dropdown"
    assert not forms.parse(body).get("Poetry Runtime Logs").empty  # without the form
    logs = Ask(what="output", question="What output?", field="Poetry Runtime Logs")
    labels = LabelsConfig.model_validate({"type": [{"name": "kind/bug", "ask": [
        logs.model_dump(exclude_defaults=True)]}]})  # fmt: skip
    decision = Decision(questions=["What output?"])
    assert validate(decision, labels, None, new).questions == []
    assert validate(decision, labels, None, new, typed).questions == ["What output?"]


def test_init_reads_the_checkouts_form_for_the_bug_type(tmp_path, capsys):
    from issue_assistant.cli import main
    from issue_assistant.config.labels import load_labels

    folder = tmp_path / ".github" / "ISSUE_TEMPLATE"
    folder.mkdir(parents=True)
    (folder / "bug.yml").write_text(FORM_YML)  # adds kind/bug; no field for a reproduction
    assert main(["init", "--snapshot", str(POETRY), "--dir", str(tmp_path)]) == 0
    assert "questions answered by the checkout's issue forms" in capsys.readouterr().out
    labels = load_labels(tmp_path / ".github" / "issue-assistant" / "labels.toml")
    fields = {a.what: a.field for a in labels.type_label("kind/bug").ask}
    assert fields == {"the version": "Poetry Version", "steps to reproduce": None,
                      "what happened": "Poetry Runtime Logs"}  # fmt: skip


_WORDS = st.text(alphabet="abcdefghij XYZ0123.,:", min_size=1, max_size=30).filter(str.strip)


@examples(100)  # a pure parser, a body of up to six fields
@given(
    st.lists(
        st.tuples(_WORDS, st.lists(_WORDS, max_size=4)),
        min_size=1,
        max_size=6,
        unique_by=lambda p: " ".join(p[0].casefold().split()),
    )
)
def test_any_form_body_parses_back_to_its_fields(pairs):
    body = "\n\n".join(
        f"### {label.strip()}\n\n" + ("\n".join(lines) if lines else forms.NO_RESPONSE)
        for label, lines in pairs
    )
    answers = forms.parse(body)
    assert [a.label for a in answers.fields.values()] == [label.strip() for label, _ in pairs]
    for (_, lines), got in zip(pairs, answers.fields.values(), strict=True):
        assert got.text == "\n".join(lines).strip()
        assert got.empty == (not "".join(lines).strip())


@examples(300)  # a pure parser on short text: cheap
@given(st.text(max_size=300))
def test_parse_never_fails(text):
    forms.parse(text)
    forms.parse("### A\n\n" + text)


def test_the_why_line_quotes_the_reporters_answer_on_one_short_line():
    from issue_assistant.formlabels import because

    answer = forms.Answer("Issue `Kind`", "Feature\n`request` " + "x" * 100)
    line = because(answer, ["kind/feature"])
    assert "\n" not in line and line.count("`") == 2 and len(line) < 200


def test_no_question_on_an_issue_a_maintainer_opened(hf_snapshot):
    """hf-datasets #7150, a minute after a member of the organisation opened it: `bug` is
    proposed and nothing is asked of them (before, the version and the traceback were), with
    why; the same report by someone else is still asked what it does not say."""
    from issue_assistant.config.labels import load_labels
    from issue_assistant.tracker.asof import AsOfView

    labels = load_labels(ROOT / "bench" / "hf-datasets.labels.toml")
    view = AsOfView.for_issue(hf_snapshot, 7150)
    issue = view.target()
    assert issue.labels == [] and issue.user.login in hf_snapshot.repository.maintainers
    decision = Decision(type="bug", questions=[a.question for a in labels.type_label("bug").ask])
    for tracker in (view, None):  # the snapshot's list of maintainers, else GitHub's association
        out = validate(decision, labels, tracker, issue)
        assert out.type == "bug" and out.questions == []
        assert "No question: a maintainer opened the issue." in out.why
    stranger = issue.model_copy(
        update={"user": User(login="someone"), "author_association": "NONE"}
    )
    asked = validate(decision, labels, view, stranger).questions
    assert decision.questions[0] in asked  # the version; the code snippet is in the issue
    assert len(asked) == len(decision.questions) - 1


def test_the_drafted_steps_ask_counts_a_command_shown_as_run(poetry_snapshot):
    """poetry reports that show the command they ran (a shell or PowerShell prompt) or call
    their example a "repro" are not asked for steps again; a quote or a heading is no command."""
    from issue_assistant.init.files import bug_asks

    # as `init` drafts it for poetry: bound to the form's pyproject field, so a code block
    # elsewhere in the form does not count
    drafted = bug_asks({"steps to reproduce": forms.DraftedField("Example pyproject.toml")})
    steps = Ask.model_validate(next(a for a in drafted if a["what"] == "steps to reproduce"))
    assert "```" not in steps.detect
    issues = {i.number: i for i in poetry_snapshot.all_issues()}
    shown = {
        10253: "PS /home/wsl/projects/me-testsuite> poetry env activate",
        10270: "$ poetry lock --no-update",
        10204: "user@host:~$ poetry -V",
        10290: "Minimum repro:",
    }
    for number, line in shown.items():
        assert line in (issues[number].body or "")
        assert asking.missing([steps], issues[number]) == [], number
        # that line alone answers it; the rest of the sentence does not
        body = f"It fails.\n\n```\n{line}\n```\n"
        assert asking.missing([steps], _issue("it fails", body)) == [], number
        assert asking.missing([steps], _issue("it fails", "It fails.\n")) == [steps]
    for text in ("> quoted from the docs\n", "## Describe the bug\n", "It costs $ 5 a month\n",
                 ">>>not a prompt\n", "\n" * 5000 + "x"):  # fmt: skip
        assert asking.missing([steps], _issue("it fails", text)) == [steps], text[:20]
    assert asking.missing([steps], _issue("it fails", ">>> import poetry\n")) == []
