"""Releases, discussions and likely files in the context, the engine and the comment.

On the synthetic `tinyparse` snapshot (tests/contextdata.py), which has releases, discussions,
fixing pull requests and a small checkout.
"""

from __future__ import annotations

from pathlib import Path

from issue_assistant.config.labels import LabelsConfig
from issue_assistant.config.sections import Config
from issue_assistant.decision import Decision, Duplicate, validate
from issue_assistant.engines import create
from issue_assistant.index.local import open_index
from issue_assistant.moment import Moment
from issue_assistant.pipeline import analyze
from issue_assistant.tracker.asof import AsOfView
from issue_assistant.tracker.models import Event, Issue, User
from issue_assistant.tracker.snapshot import Snapshot
from tests import contextdata as data
from tests.contextdata import (
    day,
    tinyparse_checkout,  # noqa: F401 (the checkout fixture)
)
from tests.moments import moment_of

LABELS = LabelsConfig.model_validate(
    {
        "type": [
            {
                "name": "bug",
                "ask": [
                    {
                        "what": "the version",
                        "question": "Which version of tinyparse do you use?",
                        "requires": "version",
                    }
                ],
            },
            {"name": "question"},
        ],
        "area": [
            {"name": "area: parser", "paths": ["src/tinyparse/parser.py", "src/tinyparse/lex*"]},
            {"name": "area: cache", "paths": ["src/tinyparse/cache.py", "docs/**"]},
        ],
    }
)


def config_for(checkout: Path | None, **code: object) -> Config:
    section = {"checkout": str(checkout) if checkout else "", **code}
    return Config.model_validate({"code": section, "context": {"see_also_threshold": 0.3}})


def run(
    snap: Snapshot,
    number: int,
    config: Config,
    tmp_path: Path,
    issue: Issue | None = None,
    base: Moment | None = None,
):
    """Issue `number` replayed a minute after its opening, in `base` (a run's moment, its
    indexes built once) when given."""
    view = AsOfView.for_issue(snap, number)
    engine = create("similar", config, LABELS)
    if base is None:
        at = moment_of(view, open_index(snap, tmp_path / "cache"), LABELS, config)
    else:
        at = base.at(view, view.moment)
    return analyze(at, issue or view.target(), config=config, engine=engine)


def test_context_files_show_releases_and_discussions_of_the_moment(tmp_path, checkout) -> None:
    analysis = run(data.snapshot(), 5, config_for(checkout), tmp_path)
    files = analysis.context.files()
    releases = files["releases.md"]
    assert (
        releases.index("## `v1.2.0`")
        < releases.index("## `v1.1.0`")
        < releases.index("## `v1.0.0`")
    )
    discussions = files["discussions.md"]
    assert "Discussion 50: `How do I configure the cache directory?`" in discussions
    first = discussions.index("## Discussion")
    assert discussions[first:].startswith("## Discussion 50")
    # 52 was answered on day 40, after the issue (day 35): unanswered in the context
    assert "Discussion 52" in discussions
    block = discussions[discussions.index("Discussion 52") :]
    assert "- answered: no" in block and "Fixed in 1.2.0" not in block


def test_releases_published_later_are_not_in_the_context(tmp_path, checkout) -> None:
    analysis = run(data.snapshot(), 1, config_for(checkout), tmp_path)  # day 6
    assert [r.tag for r in analysis.context.releases or []] == ["v1.0.0"]
    assert "v1.1.0" not in analysis.context.files()["releases.md"]
    shown = {h.number: h.discussion for h in analysis.context.discussions}
    assert set(shown) <= {50, 51, 52} and 52 in shown  # all three existed on day 6
    assert not shown[52].answered


def test_an_answered_discussion_is_named_as_see_also_never_as_duplicate(tmp_path, checkout) -> None:
    analysis = run(data.snapshot(), 5, config_for(checkout), tmp_path)
    assert [s.number for s in analysis.plan.see_also] == [50]
    assert analysis.decision.duplicate is None or analysis.decision.duplicate.number not in (
        50,
        51,
        52,
    )
    assert "**See also:** [discussion #50](https://github.com/octo/tinyparse/discussions/50)" in (
        analysis.comment
    )
    # an engine naming a discussion as the duplicate is overruled: it is not an issue
    view = AsOfView.for_issue(data.snapshot(), 5)
    wrong = Decision(duplicate=Duplicate(number=50, reason="same question", confidence=0.9))
    assert validate(wrong, LABELS, view, view.target()).duplicate is None


def test_no_see_also_when_the_discussion_was_not_answered_yet(tmp_path, checkout) -> None:
    snap = data.snapshot()
    crash = Issue(
        number=9,
        title="Parser crash on an empty token stream",
        body="The parser crashes on an empty token stream.",
        user=User(login="zed"),
        created_at=day(20),
        events=[],
        comments=[],
    )
    snap = Snapshot(
        snap.repository,
        [*snap.all_issues(), crash],
        releases=data.RELEASES,
        discussions=data.DISCUSSIONS,
    )
    analysis = run(snap, 9, config_for(checkout), tmp_path)
    assert 52 in [h.number for h in analysis.context.discussions]  # similar, but unanswered then
    assert analysis.plan.see_also == []


def test_likely_files_in_the_comment_with_line_links(tmp_path, checkout) -> None:
    measured = tmp_path / "likely_files.toml"  # a file ranked first: right 90% of the time
    measured.write_text('[precision]\n"first-clear" = 0.9\n"first-close" = 0.9\n')
    analysis = run(data.snapshot(), 1, config_for(checkout, calibration=str(measured)), tmp_path)
    files = analysis.plan.likely_files
    assert files[0].path == "src/tinyparse/parser.py" and files[0].line == 12
    assert files[0].reason == "stack frame"
    sha = analysis.context.code.sha
    assert sha and len(sha) == 40
    comment = analysis.comment
    why = comment.split("<details><summary>Why</summary>")[1]  # for maintainers, folded
    assert "\n**Likely files** (listed only where" in why
    link = f"https://github.com/octo/tinyparse/blob/{sha}/src/tinyparse/parser.py#L12"
    assert f"[`src/tinyparse/parser.py:12`]({link}): stack frame: line 12, in" in comment
    assert "files.md" in analysis.context.files()
    assert "`src/tinyparse/parser.py` | 12 | stack frame" in analysis.context.files()["files.md"]


def test_no_checkout_no_likely_files(tmp_path) -> None:
    analysis = run(data.snapshot(), 1, config_for(None), tmp_path)
    assert analysis.plan.likely_files == [] and "Likely files" not in analysis.comment
    assert "No checkout" in analysis.context.files()["files.md"]


def reported(number: int, when: float, body: str) -> Issue:
    return Issue(
        number=number,
        title="Crash when parsing",
        body=body,
        user=User(login="zed"),
        created_at=day(when),
        labels=["bug"],
        events=[Event(event="labeled", label="bug", created_at=day(when))],  # an issue form's
        comments=[],
    )


def with_issue(issue: Issue, releases=data.RELEASES, includes=("releases", "discussions")):
    base = data.snapshot()
    return Snapshot(
        data.repository(includes),
        [*base.all_issues(), issue],
        releases=releases,
        discussions=data.DISCUSSIONS,
    )


def test_the_latest_release_is_named_when_the_reporter_runs_an_older_one(tmp_path) -> None:
    issue = reported(9, 35, "It crashes. I'm on tinyparse 1.1.0.")
    analysis = run(with_issue(issue), 9, config_for(None), tmp_path)
    questions = analysis.decision.questions
    assert any("The latest release is v1.2.0" in q and "1.1.0" in q for q in questions)
    assert "Which version of tinyparse do you use?" not in questions


def test_no_release_note_when_current_or_unknown_or_not_named(tmp_path) -> None:
    current = reported(9, 35, "It crashes. I'm on tinyparse 1.2.0.")
    assert not any(
        "latest release" in q
        for q in run(with_issue(current), 9, config_for(None), tmp_path / "a").decision.questions
    )
    # at day 15 the latest release was 1.1.0: 1.1.0 is current then
    early = reported(9, 15, "It crashes. I'm on tinyparse 1.1.0.")
    assert not any(
        "latest release" in q
        for q in run(with_issue(early), 9, config_for(None), tmp_path / "b").decision.questions
    )
    # no release list known: never a guess
    unknown = reported(9, 35, "It crashes. I'm on tinyparse 1.1.0.")
    got = run(with_issue(unknown, releases=[], includes=()), 9, config_for(None), tmp_path / "c")
    assert got.context.releases is None
    assert not any("latest release" in q for q in got.decision.questions)
    # no version named: the ask's own question
    silent = reported(9, 35, "It crashes.")
    got = run(with_issue(silent), 9, config_for(None), tmp_path / "d")
    assert "Which version of tinyparse do you use?" in got.decision.questions
    assert not any("latest release" in q for q in got.decision.questions)


def test_an_area_whose_paths_hold_the_likely_files_gains_weight(tmp_path, checkout) -> None:
    # nothing earlier is about the lexer, so the neighbours' votes name no area; the likely
    # file is the lexer, which `area: parser` owns (`src/tinyparse/lex*`)
    lexer = Issue(
        number=9,
        title="lex splits text wrongly",
        body="The lex function in the lexer splits my text at the wrong places.",
        user=User(login="zed"),
        created_at=day(35),
        events=[],
        comments=[],
    )
    snap = with_issue(lexer)
    off = run(snap, 9, config_for(checkout, area_boost=0), tmp_path / "off")
    on = run(snap, 9, config_for(checkout, area_boost=1.0), tmp_path / "on")
    assert on.context.likely_files[0].path == "src/tinyparse/lexer.py"
    assert "area: parser" not in off.decision.areas
    assert on.decision.areas == ["area: parser"]
    assert on.decision.confidence["area: parser"] >= 0.4


def test_llm_prompts_carry_the_repository_files_only_when_known(tmp_path, checkout) -> None:
    from issue_assistant.engines.prompt import prompts

    known = run(data.snapshot(), 5, config_for(checkout), tmp_path / "a").context
    _, user = prompts(known)
    assert "# Releases" in user and "# Similar discussions" in user and "# Likely files" in user
    assert "## `v1.2.0`" in user and "src/tinyparse/cache.py" in user
    plain = Snapshot(data.repository(()), data.ISSUES)
    _, user = prompts(run(plain, 5, config_for(None), tmp_path / "b").context)
    assert "# Releases" not in user and "# Likely files" not in user


def test_one_discussion_index_serves_every_moment_without_later_ones(tmp_path) -> None:
    snap = data.snapshot()
    early = Issue(
        number=9,
        title="Parser crash on an empty token stream",
        body="crash on empty token stream",
        user=User(login="zed"),
        created_at=day(4.5),
        events=[],
        comments=[],
    )
    snap = Snapshot(
        snap.repository,
        [*snap.all_issues(), early],
        releases=data.RELEASES,
        discussions=data.DISCUSSIONS,
    )
    base = moment_of(snap, open_index(snap, tmp_path / "cache"), LABELS, config_for(None))
    first = run(snap, 9, config_for(None), tmp_path, base=base).context
    assert 52 not in [h.number for h in first.discussions]  # created on day 5, after
    assert "Discussion 52" not in first.files()["discussions.md"]
    later = run(snap, 5, config_for(None), tmp_path, base=base).context
    assert later.moment.discussions is not None and first.moment.discussions is not None
    assert later.moment.discussions.index is first.moment.discussions.index  # built once
    found = later.moment.search_discussions("parser crash empty token", 5, later.issue)
    assert 52 in [h.number for h in found]


def test_a_moment_through_another_view_shares_what_a_run_built_once(tmp_path, checkout) -> None:
    """A run builds the indexes once (the issues, the code, the fixes, the discussions) and each
    issue's moment is a view of them: the releases and discussions it shows are its own."""
    snap = data.snapshot()
    base = moment_of(snap, open_index(snap, tmp_path / "cache"), LABELS, config_for(checkout))
    assert base.code is not None and base.fixes is not None and base.discussions is not None
    assert base.releases is not None and not base.replay and base.as_of is None
    view = AsOfView.for_issue(snap, 1)
    at = base.at(view, view.moment)
    assert at.replay and at.as_of == view.moment and at.tracker is view
    for name in ("index", "code", "fixes", "learned", "labels"):
        assert getattr(at, name) is getattr(base, name), name
    assert at.discussions is not None and at.discussions.index is base.discussions.index
    assert at.releases == view.releases() and len(at.releases or []) < len(base.releases)
    # discussion 52 was answered on day 40, after issue 1: its moment shows it unanswered
    assert base.discussions.visible[52].answered and not at.discussions.visible[52].answered
