"""`backlog` against the fake GitHub (real PyGithub over HTTP): selection and its skip rules,
`--limit`, `[backlog] per_day`, resume, idempotence and the stop before the hourly limit."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from issue_assistant.backlog.report import outputs, render_run
from issue_assistant.backlog.run import run_backlog
from issue_assistant.backlog.state import STATE_FILE
from issue_assistant.comment import extract_plan, render_comment
from issue_assistant.config.sections import BacklogConfig
from issue_assistant.decision import Decision
from issue_assistant.index.local import index_path
from tests.fakegithub import FakeGitHub
from tests.fakegithub.fixtures import make_tracker
from tests.test_approve import CONFIG, LABELS

BOT = "github-actions[bot]"
PENDING = "assistant: pending"
REPO = "octo/repo"
NOW = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


def decision(context) -> Decision:  # noqa: ANN001 - the fake engine's callable answer
    return Decision(type="feature", summary=f"#{context.issue.number} asks for something new.")


def config(**backlog: object):
    """The test config, checking the type group only unless `groups` says otherwise."""
    backlog.setdefault("groups", ["type"])
    return CONFIG.model_copy(update={"backlog": BacklogConfig(**backlog)})


def seed(gh: FakeGitHub, n: int = 5) -> list[int]:
    """`n` open issues nobody labelled (one a day from January), and one already triaged."""
    numbers = []
    for i in range(n):
        at = datetime(2025, 1, 1, tzinfo=UTC) + timedelta(days=i)
        numbers.append(gh.add_issue(f"Please support format {i}", "It would help.", created_at=at))
    gh.add_issue("Crash", "Traceback", labels=["bug"], created_at=datetime(2025, 1, 9, tzinfo=UTC))
    gh.clock = NOW - timedelta(minutes=5)  # what the runs write is written about now
    return numbers


def answers(fake_engine, n: int = 30) -> None:
    fake_engine.enqueue(*[decision] * n)


def run(gh: FakeGitHub, tmp_path, cfg=None, writes: str = "live", now=NOW, **kw):
    return run_backlog(
        make_tracker(gh),
        LABELS,
        cfg or config(),
        writes=writes,  # type: ignore[arg-type]
        now=now,
        cache_dir=tmp_path / "cache",
        **kw,
    )


def proposals(gh: FakeGitHub) -> dict[int, int]:
    """Issue number -> how many comments with a plan the bot has on it."""
    out: dict[int, int] = {}
    for c in gh.comments.values():
        if c.user == BOT and extract_plan(c.body) is not None:
            out[c.issue] = out.get(c.issue, 0) + 1
    return out


@pytest.fixture
def gh():
    with FakeGitHub(REPO, token="test-token") as server:
        yield server


def test_limit_then_resume_then_nothing_twice(gh, tmp_path, fake_engine):
    numbers = seed(gh)
    answers(fake_engine)
    first = run(gh, tmp_path, limit=2)
    assert [i.number for i in first.proposed] == numbers[:2]  # oldest first
    assert proposals(gh) == {numbers[0]: 1, numbers[1]: 1}
    assert all(PENDING in gh.issues[n].labels for n in numbers[:2])
    assert first.stopped == f"--limit 2 reached; the next run goes on from #{numbers[2]}"
    # the next run goes on where this one stopped
    second = run(gh, tmp_path, limit=2)
    assert [i.number for i in second.proposed] == numbers[2:4]
    third = run(gh, tmp_path, limit=2)
    assert [i.number for i in third.proposed] == numbers[4:]
    assert third.stopped is None
    # re-running posts nothing: every issue has its one comment
    gh.clear_requests()
    again = run(gh, tmp_path, limit=2)
    assert again.proposed == [] and again.selected == 0
    assert [w for w in gh.writes if "/comments" in w[1]] == []
    assert proposals(gh) == dict.fromkeys(numbers, 1)
    # the triaged issue (#6, a type already) was never selected
    assert 6 not in proposals(gh)


def test_a_lost_state_file_still_posts_nothing_twice(gh, tmp_path, fake_engine):
    numbers = seed(gh, 3)
    answers(fake_engine)
    run(gh, tmp_path, limit=2)
    (index_path(tmp_path / "cache", REPO) / STATE_FILE).unlink()
    # GitHub says which issues were proposed: the pending label (index), the comment (fresh)
    gh.issues[numbers[0]].labels.remove(PENDING)  # a maintainer took the label off
    again = run(gh, tmp_path, limit=5)
    assert [i.number for i in again.proposed] == [numbers[2]]
    assert proposals(gh) == dict.fromkeys(numbers, 1)
    skipped = {i.number: i.rule for i in again.items if i.action == "skipped"}
    assert skipped == {numbers[0]: "assistant"}


def test_per_day_bounds_all_runs_of_a_day(gh, tmp_path, fake_engine):
    numbers = seed(gh)
    answers(fake_engine)
    cfg = config(per_day=3)
    run(gh, tmp_path, cfg, limit=2)
    second = run(gh, tmp_path, cfg, limit=2, now=NOW + timedelta(hours=1))
    assert [i.number for i in second.proposed] == numbers[2:3]
    assert second.stopped is not None and "[backlog] per_day = 3" in second.stopped
    assert f"goes on from #{numbers[3]}" in second.stopped
    assert len(proposals(gh)) == 3
    tomorrow = run(gh, tmp_path, cfg, limit=5, now=NOW + timedelta(days=1))
    assert [i.number for i in tomorrow.proposed] == numbers[3:]


def test_stops_before_the_hourly_limit_and_goes_on_after_it(gh, tmp_path, fake_engine):
    numbers = seed(gh)
    answers(fake_engine)
    cfg = config(rate_margin=20)
    gh.limit_rate(45, reset_in=1800)
    first = run(gh, tmp_path, cfg, limit=10)
    assert first.stopped is not None
    assert "stopped before GitHub's hourly limit" in first.stopped
    assert "[backlog] rate_margin = 20" in first.stopped and "the limit resets at" in first.stopped
    done = [i.number for i in first.proposed]
    assert 0 < len(done) < len(numbers)
    assert f"goes on from #{numbers[len(done)]}" in first.stopped
    # it stopped in time: no request was refused
    assert all(r.status != 403 for r in gh.requests)
    assert gh.rate_remaining is not None and gh.rate_remaining >= 20
    gh.limit_rate(1000)  # the new hour
    second = run(gh, tmp_path, cfg, limit=10)
    assert [i.number for i in second.proposed] == numbers[len(done) :]
    assert proposals(gh) == dict.fromkeys(numbers, 1)


def test_skip_rules_each_named(gh, tmp_path, fake_engine):
    numbers = seed(gh, 2)
    bot = gh.add_issue("Bump deps", "auto", user="renovate[bot]")
    locked = gh.add_issue("Old thread", "locked one")
    gh.issues[locked].locked = True
    opted = gh.add_issue("Leave me", "no", labels=["assistant: skip"])
    answered = gh.add_issue("How do I?", "question")
    gh.add_comment(
        answered,
        "Try the flag.",
        "maria",
        author_association="MEMBER",
        created_at=NOW - timedelta(days=2),
    )
    stale = gh.add_issue("Stale answer", "old")
    gh.add_comment(
        stale,
        "Long ago.",
        "maria",
        author_association="MEMBER",
        created_at=NOW - timedelta(days=60),
    )
    other = gh.add_issue("Has a proposal", "done before")
    plan = extract_plan(_proposal(other))
    gh.add_comment(other, render_comment(plan), BOT)  # a dismissed or older one: still skipped
    answers(fake_engine)
    result = run(gh, tmp_path, limit=20)
    assert {i.number for i in result.proposed} == {*numbers, stale}
    rules = {s.number: s.rule for s in result.skipped}
    rules |= {i.number: i.rule for i in result.items if i.action == "skipped"}
    assert rules == {
        bot: "bot",
        locked: "locked",
        opted: "opt-out",
        answered: "answered",
        other: "assistant",
    }
    text = render_run(result)
    assert "a maintainer (maria) answered on" in text and "opened by a bot" in text
    # the answer keeps it out of the next runs until [backlog] answered_days have passed
    gh.clear_requests()
    later = run(gh, tmp_path, limit=20)
    assert {s.number: s.rule for s in later.skipped}[answered] == "answered"
    assert not any(f"/issues/{answered}/comments" in p for p in gh.paths())
    after = run(gh, tmp_path, limit=20, now=NOW + timedelta(days=13))
    assert answered in {i.number for i in after.proposed}


def _proposal(number: int) -> str:
    from issue_assistant.comment import Plan

    plan = Plan(
        repository=REPO,
        issue=number,
        reporter="alice",
        created_at=NOW,
        engine="fake",
        type="bug",
        status="dismissed",
        history=[{"action": "dismissed", "actor": "maria", "at": NOW}],
    )
    return render_comment(plan)


def test_the_discussion_so_far_is_evidence(gh, tmp_path, fake_engine):
    [number] = seed(gh, 1)
    gh.add_comment(
        number, "Same here, with version 2.1.", "carol", created_at=NOW - timedelta(days=40)
    )
    gh.add_comment(
        number,
        "This is a feature request.",
        "maria",
        author_association="MEMBER",
        created_at=NOW - timedelta(days=30),
    )
    answers(fake_engine)
    run(gh, tmp_path)
    [context] = fake_engine.history
    assert context.as_of == NOW
    said = [(c.user.login, c.body) for c in context.issue.comments]
    assert said == [
        ("carol", "Same here, with version 2.1."),
        ("maria", "This is a feature request."),
    ]
    assert "This is a feature request." in context.files()["issue.md"]


def test_dry_run_writes_nothing_and_reports_every_proposal(gh, tmp_path, fake_engine):
    numbers = seed(gh, 3)
    answers(fake_engine)
    result = run(gh, tmp_path, writes="dry-run", limit=200)
    assert [i.number for i in result.proposed] == numbers
    assert gh.writes == []
    text = render_run(result)
    assert "nothing was written" in text
    for n in numbers:
        assert f"[#{n}](https://github.com/{REPO}/issues/{n})" in text
    assert text.count("<!-- issue-assistant:plan") == 3  # each comment as a live run posts it
    data = outputs(result)
    assert data["proposed"] == numbers and data["writes"] == "dry-run"
    # a dry run does not count as proposed: the live run then posts all of them
    live = run(gh, tmp_path, limit=200)
    assert [i.number for i in live.proposed] == numbers


def test_a_rate_limit_mid_issue_stops_the_run_and_the_next_finishes_it(gh, tmp_path, fake_engine):
    numbers = seed(gh, 3)
    answers(fake_engine)
    # the second issue's comment is posted, then its pending label meets the hourly limit
    gh.fail_primary_rate_limit("POST", rf"/issues/{numbers[1]}/labels$", reset_in=3600)
    first = run(gh, tmp_path, limit=10)
    assert [i.number for i in first.proposed] == numbers[:1]
    assert first.stopped is not None and "stopped before GitHub's hourly limit" in first.stopped
    assert f"goes on from #{numbers[1]}" in first.stopped
    assert proposals(gh) == {numbers[0]: 1, numbers[1]: 1}
    assert PENDING not in gh.issues[numbers[1]].labels
    # the next run finishes #2 (its label, no second comment) and goes on with #3
    second = run(gh, tmp_path, limit=10)
    assert PENDING in gh.issues[numbers[1]].labels
    assert [i.number for i in second.proposed] == numbers[2:]
    assert proposals(gh) == dict.fromkeys(numbers, 1)


def cli_base(gh: FakeGitHub, tmp_path, monkeypatch) -> list[str]:  # noqa: ANN001
    """`backlog` on the fake GitHub with the test configuration, from `tmp_path`."""
    from tests.test_approve import DATA

    config = tmp_path / "config.toml"
    config.write_text((DATA / "config.toml").read_text())
    monkeypatch.setenv("GITHUB_TOKEN", "test-token")
    monkeypatch.setenv("GITHUB_API_URL", gh.base_url)
    monkeypatch.chdir(tmp_path)
    base = ["backlog", "-R", REPO, "--labels", str(DATA / "labels.toml"), "--config", str(config)]
    return [*base, "--cache-dir", str(tmp_path / "cache")]


def test_the_command_line(gh, tmp_path, fake_engine, monkeypatch, capsys):
    import json

    from issue_assistant.cli import main

    seed(gh, 2)
    answers(fake_engine)
    base = cli_base(gh, tmp_path, monkeypatch)
    assert main([*base, "--limit", "1"]) == 0  # a dry run
    out = capsys.readouterr()
    report = tmp_path / "octo-repo-backlog.md"
    assert out.out.strip() == str(report)
    assert "--limit 1 reached" in out.err and gh.writes == []
    assert "a live run would post" in report.read_text()
    assert main([*base, "--apply", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["writes"] == "live" and data["proposed"] == [1, 2]
    assert proposals(gh) == {1: 1, 2: 1}
    assert main([*base, "--apply", "--dry-run"]) == 2
    assert "--apply and --dry-run contradict each other" in capsys.readouterr().err
    assert main([*base, "--post"]) == 2
    assert "--post goes with --duplicates" in capsys.readouterr().err


def test_a_skip_of_the_live_path_is_kept_so_it_does_not_head_every_run(gh, tmp_path, fake_engine):
    numbers = seed(gh, 2)
    answers(fake_engine)
    # the opt-out label comes between the index refresh and the issue's analysis
    gh.before("GET", rf"/issues/{numbers[0]}$", lambda: gh.issues[numbers[0]].labels.append(
        "assistant: skip"))  # fmt: skip
    first = run(gh, tmp_path, limit=1)
    [skipped] = [i for i in first.items if i.action == "skipped"]
    assert skipped.number == numbers[0] and skipped.rule == "not proposed"
    assert "opt-out" in skipped.reason
    assert [i.number for i in first.proposed] == [numbers[1]]  # the limit went on to the next
    gh.issues[numbers[0]].labels.remove("assistant: skip")
    gh.clear_requests()
    second = run(gh, tmp_path, limit=1)
    assert second.selected == 0 and second.items == []  # kept out, without a request
    later = run(gh, tmp_path, limit=1, now=NOW + timedelta(days=15))
    assert [i.number for i in later.proposed] == [numbers[0]]


def test_a_dry_run_leaves_nothing_that_changes_the_next_run(gh, tmp_path, fake_engine):
    """A dry run that skipped an issue (kept "not proposed" for [backlog] answered_days by a
    live run) and would have proposed for the others saves no state: the live run after it
    looks at every issue again and proposes for the same ones."""
    numbers = seed(gh, 3)
    answers(fake_engine)
    # the opt-out label comes between the index refresh and the issue's analysis
    gh.before("GET", rf"/issues/{numbers[0]}$", lambda: gh.issues[numbers[0]].labels.append(
        "assistant: skip"))  # fmt: skip
    state = index_path(tmp_path / "cache", REPO) / STATE_FILE
    dry = run(gh, tmp_path, writes="dry-run", limit=10)
    assert [i.number for i in dry.proposed] == numbers[1:]
    assert [(i.number, i.rule) for i in dry.items if i.action == "skipped"] == [
        (numbers[0], "not proposed")
    ]
    assert not state.exists() and gh.writes == []
    gh.issues[numbers[0]].labels.remove("assistant: skip")
    live = run(gh, tmp_path, limit=10)
    assert [i.number for i in live.proposed] == numbers  # the dry run's skip was not kept
    assert state.exists() and gh.writes


def test_two_runs_at_once_leave_one_comment_per_issue(gh, tmp_path, fake_engine):
    """Two machines (each its own cache and state) on the same backlog at the same time: the
    live path's claim keeps one comment and one pending label per issue."""
    import threading

    numbers = seed(gh, 4)
    answers(fake_engine, 40)
    results = {}

    def one(name: str) -> None:
        results[name] = run(gh, tmp_path / name, limit=10)

    threads = [threading.Thread(target=one, args=(n,)) for n in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert proposals(gh) == dict.fromkeys(numbers, 1)
    for n in numbers:
        assert gh.issues[n].labels.count(PENDING) == 1
    # and a third run, with either state, posts nothing
    assert run(gh, tmp_path / "a", limit=10).proposed == []


def test_default_groups_are_the_ones_the_open_issues_lack(gh, tmp_path, fake_engine):
    """Unset `[backlog] groups`: every open issue has a type (a form set it), so the run looks
    for what they lack (the area); when nothing lacks a checked group, the report names the
    setting that chooses them."""
    for i in range(3):
        at = datetime(2025, 1, 1, tzinfo=UTC) + timedelta(days=i)
        gh.add_issue(f"Crash {i}", "Traceback", labels=["bug"], created_at=at)
    gh.clock = NOW - timedelta(minutes=5)
    answers(fake_engine)
    unset = CONFIG.model_copy(update={"backlog": BacklogConfig()})
    result = run(gh, tmp_path, unset, writes="dry-run")
    assert result.groups == ["area", "priority"] and result.selected == 3
    typed = run(gh, tmp_path / "typed", config(), writes="dry-run")  # `groups = ["type"]`
    assert typed.selected == 0
    assert "set `[backlog] groups` in config.toml" in render_run(typed)
    assert "[backlog] groups" not in render_run(result)
