"""The Action end to end: real webhook payloads, the real PyGithub client, the local fake GitHub.

The payloads are read from `shared/data/webhooks` (octokit/webhooks examples, MIT); their issue
number is adapted to the fake repository's state in a temporary copy.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from issue_assistant import action
from issue_assistant.comment import extract_plan
from issue_assistant.decision import Decision, Duplicate
from issue_assistant.settings import get_input
from issue_assistant.tracker import github_tracker
from issue_assistant.tracker.client import Throttle
from tests.fakegithub import FakeGitHub
from tests.fakegithub.fixtures import TOKEN, make_tracker
from tests.test_approve import DATA

WEBHOOKS = Path(__file__).parent.parent.parent / "shared" / "data" / "webhooks"
REPO = "Codertocat/Hello-World"
# Who opened #3: someone outside the repository (the sample payloads' reporter is its owner, and
# nothing is asked of a maintainer who opens an issue).
REPORTER = "mona"
BOT = "github-actions[bot]"
PENDING = "assistant: pending"
NOW = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)
DECISION = Decision(
    areas=["area: docs"],
    priority="p2",
    duplicate=Duplicate(number=1, reason="the same typo", confidence=0.9),
    questions=["Which page of the README?"],
    summary="A typo in the README.",
)


@pytest.fixture
def vcr_config() -> dict:
    return {"allowed_hosts": ["127.0.0.1"]}


@pytest.fixture
def gh() -> Any:
    """The fake GitHub with the payloads' repository: #1 an older report, #3 the payload's issue,
    opened by `REPORTER`."""
    with FakeGitHub(REPO, token=TOKEN) as server:
        seed(server)
        yield server


def seed(server: FakeGitHub) -> None:
    payload = load("issues/opened.payload.json")["issue"]
    server.add_issue("Typo in the README", "commit is spelled with two t's", "octocat", number=1)
    server.add_issue("Add a CONTRIBUTING file", "Please add one.", "hubot", number=2)
    server.add_issue(
        payload["title"],
        payload["body"],
        REPORTER,
        number=3,
        labels=[lab["name"] for lab in payload["labels"]],
    )
    for name in ("area: docs", "area: io", "feature", "p1", "p2", PENDING, "needs info"):
        server.add_label(name)
    server.set_permission("Codertocat", "admin")
    server.set_permission("maria", "maintain")
    server.set_permission("rita", "read")


def load(name: str) -> dict[str, Any]:
    return json.loads((WEBHOOKS / name).read_text(encoding="utf-8"))


def event(tmp_path: Path, name: str, change: Callable[[dict], None] | None = None) -> Path:
    """A webhook payload with its issue adapted to #3 by `REPORTER` (and any other `change`)."""
    data = load(name)
    data["issue"]["number"] = 3
    data["issue"]["user"]["login"] = REPORTER
    data["issue"]["author_association"] = "NONE"
    if change:
        change(data)
    path = tmp_path / "event.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def environment(
    tmp_path: Path, command: str, event_name: str, event_path: Path | None, **inputs: str
) -> dict[str, str]:
    config = tmp_path / "config.toml"
    if not config.exists():
        text = (DATA / "config.toml").read_text(encoding="utf-8")
        config.write_text(text + f'\n[index]\ncache_dir = "{tmp_path / "cache"}"\n')
    env = {
        "GITHUB_ACTIONS": "true",
        "GITHUB_REPOSITORY": REPO,
        "GITHUB_EVENT_NAME": event_name,
        "GITHUB_WORKSPACE": str(tmp_path),
        "GITHUB_OUTPUT": str(tmp_path / "output"),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "INPUT_COMMAND": command,
        "INPUT_LABELS": str(DATA / "labels.toml"),
        "INPUT_CONFIG": str(config),
    }
    if event_path is not None:
        env["GITHUB_EVENT_PATH"] = str(event_path)
    env.update({f"INPUT_{k.upper().replace('_', '-')}": v for k, v in inputs.items()})
    return env


def outputs(tmp_path: Path) -> dict[str, str]:
    """`$GITHUB_OUTPUT` parsed as the runner does (`name=value` and `name<<DELIM`)."""
    out: dict[str, str] = {}
    lines = iter((tmp_path / "output").read_text(encoding="utf-8").splitlines())
    for line in lines:
        if m := re.fullmatch(r"([\w-]+)<<(\S+)", line):
            value = []
            for inner in lines:
                if inner == m.group(2):
                    break
                value.append(inner)
            out[m.group(1)] = "\n".join(value)
        else:
            name, _, value = line.partition("=")
            out[name] = value
    return out


def analyze(gh: FakeGitHub, tmp_path: Path, fake_engine, decision=DECISION, **inputs) -> int:
    fake_engine.enqueue(decision)
    env = environment(
        tmp_path, "analyze", "issues", event(tmp_path, "issues/opened.payload.json"), **inputs
    )
    return action.run(env, tracker=make_tracker(gh), now=NOW)


def apply(gh: FakeGitHub, tmp_path: Path, event_name: str = "schedule", path=None, **inputs) -> int:
    if path is None:
        path = tmp_path / "schedule.json"
        path.write_text(json.dumps({"schedule": "*/15 * * * *"}))
    env = environment(tmp_path, "apply", event_name, path, **inputs)
    return action.main(env, tracker=make_tracker(gh))


def assistant_comment(gh: FakeGitHub):
    return next(c for c in gh.comments.values() if c.user == BOT and c.issue == 3)


# ---- analyze -----------------------------------------------------------------------------------


def test_analyze_posts_one_comment_and_outputs(gh, tmp_path, fake_engine):
    assert analyze(gh, tmp_path, fake_engine) == 0
    comment = assistant_comment(gh)
    plan = extract_plan(comment.body)
    assert plan.labels() == ["area: docs", "p2"] and plan.duplicate.number == 1
    assert plan.labels_before == ["bug"] and plan.reporter == REPORTER
    assert [(m, p) for m, p, _ in gh.writes] == [
        ("POST", f"/repos/{REPO}/issues/3/comments"),
        ("POST", f"/repos/{REPO}/issues/3/labels"),
    ]
    assert gh.issues[3].labels == ["bug", PENDING]
    out = outputs(tmp_path)
    assert out["skipped"] == "false"
    assert out["comment-url"] == f"{gh.base_url}/{REPO}/issues/3#issuecomment-{comment.id}"
    assert json.loads(out["decision"])["areas"] == ["area: docs"]
    assert "decision<<ghadelimiter_" in (tmp_path / "output").read_text()
    summary = (tmp_path / "summary.md").read_text()
    assert "#3: posted the proposal" in summary and "`area: docs` · `p2`" in summary


def test_outputs_are_plain_json_and_simple_values(gh, tmp_path, fake_engine):
    """Issue 17 item 4: `fromJSON(steps.x.outputs.decision)` works (no Markdown escapes in keys
    or text); `labels` and `duplicate` are plain values, as actions/labeler's outputs are."""
    decision = DECISION.model_copy(
        update={
            "summary": "`read_csv` fails_here for @octocat",
            "duplicate": Duplicate(number=1, reason="the same_typo", confidence=0.9),
        }
    )
    assert analyze(gh, tmp_path, fake_engine, decision) == 0
    out = outputs(tmp_path)
    assert "\\" not in out["decision"]  # no `fallback\_from`, `same\_typo`
    data = json.loads(out["decision"])
    assert {"fallback_from", "label_model", "areas", "priority", "usage"} <= set(data)
    assert data["duplicate"]["reason"] == "the same_typo"
    assert data["summary"].startswith("`read_csv` fails_here for @")
    assert "@octocat" not in data["summary"]  # still no mention a later step could post
    assert out["labels"] == "area: docs,p2" and out["duplicate"] == "1"


def test_rerun_of_analyze_edits_instead_of_posting(gh, tmp_path, fake_engine):
    analyze(gh, tmp_path, fake_engine)
    analyze(gh, tmp_path, fake_engine, DECISION.model_copy(update={"priority": "p1"}))
    assert [m for m, _, _ in gh.writes] == ["POST", "POST", "PATCH"]
    assert sum(c.user == BOT for c in gh.comments.values()) == 1
    assert extract_plan(assistant_comment(gh).body).priority == "p1"


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda d: d["issue"].update(pull_request={"url": "x"}), "a pull request"),
        (lambda d: d["issue"]["user"].update(type="Bot"), "opened by a bot"),
        (lambda d: d["issue"]["labels"].append({"name": "assistant: skip"}), "opt-out label"),
    ],
)
def test_analyze_skips_from_the_payload_without_a_request(
    gh, tmp_path, fake_engine, change, reason, caplog
):
    env = environment(
        tmp_path, "analyze", "issues", event(tmp_path, "issues/opened.payload.json", change)
    )
    caplog.set_level("INFO")
    assert action.main(env, tracker=make_tracker(gh)) == 0
    assert gh.requests == [] and fake_engine.history == []
    assert outputs(tmp_path)["skipped"] == "true"
    assert any(reason in r.message for r in caplog.records)


def test_analyze_skips_an_opt_out_label_set_on_github(gh, tmp_path, fake_engine):
    gh.issues[3].labels.append("assistant: skip")
    assert analyze(gh, tmp_path, fake_engine) == 0
    assert gh.writes == [] and outputs(tmp_path)["skipped"] == "true"


def test_dry_run_outside_actions_writes_nothing(gh, tmp_path, fake_engine):
    fake_engine.enqueue(DECISION)
    env = environment(tmp_path, "analyze", "issues", event(tmp_path, "issues/opened.payload.json"))
    del env["GITHUB_ACTIONS"]
    assert action.run(env, tracker=make_tracker(gh), now=NOW) == 0
    assert gh.writes == []
    summary = (tmp_path / "summary.md").read_text()
    assert "Writes: `dry-run`" in summary and "post the assistant's comment on #3" in summary


def test_the_summary_shows_the_comment_and_in_dry_run_is_the_whole_output(
    gh, tmp_path, fake_engine
):
    assert analyze(gh, tmp_path, fake_engine, writes="dry-run") == 0
    assert gh.writes == []
    dry = (tmp_path / "summary.md").read_text()
    assert "### The comment a live run would post" in dry
    (tmp_path / "summary.md").unlink()
    assert analyze(gh, tmp_path, fake_engine) == 0
    live = (tmp_path / "summary.md").read_text()
    posted = assistant_comment(gh).body
    assert posted in live and "<details><summary>The comment</summary>" in live
    assert posted in dry  # the same text as the comment a live run posts


def test_writes_input_off_overrides(gh, tmp_path, fake_engine):
    assert analyze(gh, tmp_path, fake_engine, writes="off") == 0
    assert gh.writes == []


def test_analyze_403_gives_one_error_line_and_exit_1(gh, tmp_path, fake_engine, capsys):
    gh.fail_next("POST", r"/issues/3/comments$", 403, body={"message": "Resource not accessible"})
    fake_engine.enqueue(DECISION)
    env = environment(tmp_path, "analyze", "issues", event(tmp_path, "issues/opened.payload.json"))
    assert action.main(env, tracker=make_tracker(gh)) == 1
    errors = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("::error::")]
    assert len(errors) == 1 and "403 Resource not accessible" in errors[0]
    assert [m for m, _, _ in gh.writes] == ["POST"]  # the refused one; no label added
    assert gh.issues[3].labels == ["bug"]


def test_the_error_line_is_sanitized_like_the_log(gh, tmp_path, fake_engine, capsys):
    # GitHub's message is not ours: a mention or an outside link in it must not reach the log.
    message = "ping @octocat, see https://evil.example/x"
    gh.fail_next("POST", r"/issues/3/comments$", 403, body={"message": message})
    fake_engine.enqueue(DECISION)
    env = environment(tmp_path, "analyze", "issues", event(tmp_path, "issues/opened.payload.json"))
    assert action.main(env, tracker=make_tracker(gh)) == 1
    errors = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("::error::")]
    assert len(errors) == 1 and "403 ping" in errors[0]
    assert "@octocat" not in errors[0] and "evil.example" not in errors[0]


# ---- apply -------------------------------------------------------------------------------------


def test_maintainer_thumbs_up_applies_on_schedule(gh, tmp_path, fake_engine):
    analyze(gh, tmp_path, fake_engine)
    comment = assistant_comment(gh)
    gh.add_reaction(comment.id, "maria", "+1")
    gh.clear_requests()
    assert apply(gh, tmp_path) == 0
    issue = gh.issues[3]
    assert issue.labels == ["bug", "area: docs", "p2"]
    assert issue.state == "closed" and issue.state_reason == "duplicate"
    bodies = [c.body for c in gh.comments.values() if c.issue == 3 and c.user == BOT]
    assert bodies[1] == "Duplicate of #1"
    plan = extract_plan(assistant_comment(gh).body)
    assert plan.status == "approved" and plan.history[-1].actor == "maria"
    assert "Approved by `maria`" in assistant_comment(gh).body
    writes = [(m, p.rsplit("/", 2)[-2:]) for m, p, _ in gh.issue_writes]
    assert [m for m, _ in writes] == ["POST", "POST", "PATCH", "PATCH", "DELETE"]
    # the run held the comment's claim (👀) while it wrote, and withdrew it
    assert [m for m, _, _ in gh.claims] == ["POST", "DELETE"]
    assert not [r for r in gh.reactions if r.user == BOT]
    assert writes[-1][1] == ["labels", PENDING]
    out = outputs(tmp_path)
    assert out["skipped"] == "false"
    assert json.loads(out["decision"])[0]["status"] == "approved"
    assert out["labels"] == "area: docs,p2" and out["duplicate"] == "1"
    assert "| #3 | approved | maria |" in (tmp_path / "summary.md").read_text()
    # a second run writes nothing
    gh.clear_requests()
    assert apply(gh, tmp_path) == 0
    assert gh.writes == []


@pytest.mark.parametrize("login", ["rita", "stranger"])
def test_non_maintainer_thumbs_up_is_said_once_in_the_comment(gh, tmp_path, fake_engine, login):
    """A 👍 from someone without a role that decides applies nothing: the comment says once,
    under the way to approve, that it was not counted and why (the login as code, not a
    mention); a second run edits nothing; a maintainer's later 👍 still approves."""
    analyze(gh, tmp_path, fake_engine)
    comment = assistant_comment(gh)
    gh.add_reaction(comment.id, login, "+1")
    gh.clear_requests()
    assert apply(gh, tmp_path) == 0
    # one edit of the comment, under the run's claim (👀, withdrawn): no label, nothing else
    assert [(m, p.rsplit("/", 1)[-1]) for m, p, _ in gh.issue_writes] == [
        ("PATCH", str(comment.id))
    ]
    assert [m for m, _, _ in gh.claims] == ["POST", "DELETE"]
    assert outputs(tmp_path)["skipped"] == "true"
    line = f"Not counted: a 👍 from `{login}` (no triage role)."
    visible = comment.body.split("<details>", 1)[0]
    approve_line = next(ln for ln in visible.splitlines() if "can **approve**" in ln)
    assert visible.count(line) == 1 and visible.index(line) > visible.index(approve_line)
    assert f"@{login}" not in comment.body
    plan = extract_plan(comment.body)
    assert plan.status == "pending" and [v.actor for v in plan.not_counted] == [login]
    assert PENDING in gh.issues[3].labels
    # the line is there: a second run writes nothing (no claim either), nor does a re-run of
    # analyze that proposes the same
    gh.clear_requests()
    assert apply(gh, tmp_path) == 0
    assert analyze(gh, tmp_path, fake_engine) == 0
    assert gh.writes == [] and comment.body.count(line) == 1
    # a maintainer's 👍 after it approves, and the decided comment no longer shows the line
    gh.add_reaction(comment.id, "maria", "+1")
    assert apply(gh, tmp_path) == 0
    plan = extract_plan(comment.body)
    assert plan.status == "approved" and plan.history[-1].actor == "maria"
    assert plan.not_counted == [] and "Not counted" not in comment.body
    assert "p2" in gh.issues[3].labels and PENDING not in gh.issues[3].labels


def test_thumbs_down_dismisses(gh, tmp_path, fake_engine):
    analyze(gh, tmp_path, fake_engine)
    gh.add_reaction(assistant_comment(gh).id, "maria", "-1")
    gh.clear_requests()
    assert apply(gh, tmp_path) == 0
    assert [m for m, _, _ in gh.issue_writes] == ["PATCH", "DELETE"]
    assert gh.issues[3].labels == ["bug"] and gh.issues[3].state == "open"
    assert "Dismissed by `maria`" in assistant_comment(gh).body


def test_slash_approve_on_issue_comment_event(gh, tmp_path, fake_engine):
    analyze(gh, tmp_path, fake_engine, DECISION.model_copy(update={"duplicate": None}))
    gh.add_comment(3, "/assistant approve", "Codertocat", author_association="OWNER")
    gh.clear_requests()

    def command(data: dict) -> None:
        data["comment"]["body"] = "/assistant approve"

    path = event(tmp_path, "issue_comment/created.payload.json", command)
    assert apply(gh, tmp_path, "issue_comment", path) == 0
    assert gh.issues[3].labels == ["bug", "area: docs", "p2", "needs info"]
    # the questions stay in view in the approved comment: no second comment repeats them
    [body] = [c.body for c in gh.comments.values() if c.user == BOT]
    visible = body.split("<details><summary>The proposal</summary>")[0]
    assert f"@{REPORTER}, could you tell us:" in visible and "Which page of the README?" in visible
    assert extract_plan(assistant_comment(gh).body).history[-1].actor == "Codertocat"
    # only the commented issue was looked at
    assert f"/repos/{REPO}/issues" not in gh.paths()


def test_comment_that_is_not_a_command_makes_no_request(gh, tmp_path, fake_engine):
    path = event(tmp_path, "issue_comment/created.payload.json")
    assert apply(gh, tmp_path, "issue_comment", path) == 0
    assert gh.requests == []
    assert outputs(tmp_path)["skipped"] == "true"


def test_forged_marker_in_another_users_comment_is_ignored(gh, tmp_path, fake_engine):
    analyze(gh, tmp_path, fake_engine)
    real = assistant_comment(gh)
    forged_body = real.body.replace('"p2"', '"p1"')
    gh.comments.pop(real.id)
    forged = gh.add_comment(3, forged_body, "mallory")
    gh.add_reaction(forged, "maria", "+1")
    gh.clear_requests()
    assert apply(gh, tmp_path) == 0
    assert gh.writes == []
    assert json.loads(outputs(tmp_path)["decision"])[0]["status"] == "skipped"


def test_label_gone_from_labels_toml_is_dropped(gh, tmp_path, fake_engine):
    analyze(gh, tmp_path, fake_engine)
    gh.add_reaction(assistant_comment(gh).id, "maria", "+1")
    smaller = tmp_path / "labels.toml"
    text = (DATA / "labels.toml").read_text()
    smaller.write_text(text.replace('name = "area: docs"', 'name = "area: documentation"'))
    assert apply(gh, tmp_path, labels=str(smaller)) == 0
    assert "area: docs" not in gh.issues[3].labels and "p2" in gh.issues[3].labels
    changes = extract_plan(assistant_comment(gh).body).history[-1].changes
    assert any("dropped `area: docs`" in c for c in changes)


def test_human_label_after_the_comment_is_kept(gh, tmp_path, fake_engine):
    analyze(gh, tmp_path, fake_engine)
    gh.issues[3].labels.append("p1")  # a maintainer sets the priority by hand
    gh.add_reaction(assistant_comment(gh).id, "maria", "+1")
    assert apply(gh, tmp_path) == 0
    labels = gh.issues[3].labels
    assert "p1" in labels and "p2" not in labels and "area: docs" in labels


@pytest.mark.parametrize("status", [403, 404, 422])
def test_github_error_exits_1_with_nothing_half_applied(gh, tmp_path, fake_engine, status, capsys):
    analyze(gh, tmp_path, fake_engine)
    gh.add_reaction(assistant_comment(gh).id, "maria", "+1")
    gh.clear_requests()
    gh.fail_next("POST", r"/issues/3/labels$", status, body={"message": "Nope"})
    assert apply(gh, tmp_path) == 1
    errors = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("::error::")]
    assert len(errors) == 1 and f"{status} Nope" in errors[0]
    assert [m for m, _, _ in gh.issue_writes] == ["POST"]  # the refused labels; nothing after
    assert [m for m, _, _ in gh.claims] == ["POST", "DELETE"]  # the claim is withdrawn
    plan = extract_plan(assistant_comment(gh).body)
    assert plan.status == "pending" and PENDING in gh.issues[3].labels
    # the next run completes it
    assert apply(gh, tmp_path) == 0
    assert extract_plan(assistant_comment(gh).body).status == "approved"


def test_secondary_rate_limit_is_waited_out(gh, tmp_path, fake_engine):
    analyze(gh, tmp_path, fake_engine)
    gh.add_reaction(assistant_comment(gh).id, "maria", "+1")
    gh.clear_requests()
    gh.fail_secondary_rate_limit("POST", r"/issues/3/labels$", retry_after=1)
    assert apply(gh, tmp_path) == 0
    assert extract_plan(assistant_comment(gh).body).status == "approved"
    label_posts = [r.status for r in gh.requests if r.path.endswith("/issues/3/labels")]
    assert label_posts == [403, 200]


def test_dry_run_apply_writes_nothing(gh, tmp_path, fake_engine):
    analyze(gh, tmp_path, fake_engine)
    gh.add_reaction(assistant_comment(gh).id, "maria", "+1")
    gh.clear_requests()
    assert apply(gh, tmp_path, writes="dry-run") == 0
    assert gh.writes == []
    assert "close #3 as duplicate" in (tmp_path / "summary.md").read_text()


# ---- glue --------------------------------------------------------------------------------------


def test_main_connects_with_the_environment(gh, tmp_path, fake_engine, monkeypatch):
    """Without a tracker given, the token and the API URL come from the environment."""
    monkeypatch.setattr(github_tracker, "Throttle", lambda *a, **k: Throttle(0, 0))
    fake_engine.enqueue(DECISION)
    env = environment(
        tmp_path,
        "analyze",
        "issues",
        event(tmp_path, "issues/opened.payload.json"),
        github_token=TOKEN,
    )
    env["GITHUB_API_URL"] = gh.base_url
    assert action.main(env) == 0
    assert assistant_comment(gh) is not None


def test_missing_labels_file_is_exit_2(tmp_path, capsys):
    env = environment(tmp_path, "analyze", "issues", None, labels=str(tmp_path / "none.toml"))
    assert action.main(env) == 2
    assert "file not found" in capsys.readouterr().err


def test_unknown_command_is_exit_2(tmp_path):
    assert action.main(environment(tmp_path, "triage", "issues", None)) == 2


def test_inputs_with_hyphens_or_underscores():
    assert get_input({"INPUT_GITHUB-TOKEN": " t "}, "github-token") == "t"
    assert get_input({"INPUT_GITHUB_TOKEN": "u"}, "github-token") == "u"
    assert get_input({}, "writes") == ""


# ---- command line ------------------------------------------------------------------------------


@pytest.fixture
def live_env(gh, monkeypatch, tmp_path):
    monkeypatch.setattr(github_tracker, "Throttle", lambda *a, **k: Throttle(0, 0))
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    monkeypatch.setenv("GITHUB_API_URL", gh.base_url)
    environment(tmp_path, "apply", "schedule", None)  # writes the config with the cache dir
    return ["--labels", str(DATA / "labels.toml"), "--config", str(tmp_path / "config.toml")]


def test_cli_apply_is_a_dry_run_unless_asked(
    gh, tmp_path, fake_engine, live_env, capsys, monkeypatch
):
    from issue_assistant.cli import main

    analyze(gh, tmp_path, fake_engine)
    gh.add_reaction(assistant_comment(gh).id, "maria", "+1")
    gh.clear_requests()
    assert main(["apply", REPO, *live_env]) == 0
    assert gh.writes == []
    out = capsys.readouterr().out
    assert "#3: approved (approved by maria)" in out and "would: close #3 as duplicate" in out
    monkeypatch.delenv("GITHUB_REPOSITORY", raising=False)
    monkeypatch.setenv("GH_REPO", "not a repo")
    assert main(["apply", "--issue", "3", "--apply", *live_env]) == 2
    assert "expected OWNER/REPO (or GH_REPO), got 'not a repo'" in capsys.readouterr().err
    monkeypatch.setenv("GH_REPO", REPO)  # the repository may come from the environment
    assert main(["apply", "--issue", "3", "--apply", *live_env]) == 0
    assert gh.issues[3].state == "closed"


def test_cli_analyze_live_target(gh, tmp_path, fake_engine, live_env, capsys):
    from issue_assistant.cli import main

    fake_engine.enqueue(DECISION)
    assert main(["analyze", f"{REPO}#3", *live_env]) == 0
    assert gh.writes == []
    assert "**Possibly the same problem as #1**" in capsys.readouterr().out


# ---- packaging ---------------------------------------------------------------------------------

ROOT = Path(__file__).parent.parent


def test_action_yml_declares_what_the_entrypoint_reads_and_writes(gh, tmp_path, fake_engine):
    import yaml

    spec = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    assert spec["runs"]["using"] == "docker"
    # main pulls the newest published image (tests/test_release.py checks which one)
    assert spec["runs"]["image"].startswith("docker://ghcr.io/")
    assert set(spec["inputs"]) == {
        "command",
        "engine",
        "model",
        "github-token",
        "anthropic-api-key",
        "labels",
        "config",
        "writes",
        "limit",
        "order",
        "duplicates",
        "post",
    }
    assert spec["inputs"]["writes"]["default"] == ""  # so that config.toml can decide
    analyze(gh, tmp_path, fake_engine)
    assert (
        set(outputs(tmp_path))
        == set(spec["outputs"])
        == {
            "decision",
            "labels",
            "duplicate",
            "comment-url",
            "skipped",
        }
    )


def concurrency_group(expression: str, event_name: str, number: int | None) -> str:
    """A workflow's `${{ ... }}` group evaluated for one event (`&&`, `||`, `==`, format)."""
    inner = expression.strip()
    assert inner.startswith("${{") and inner.endswith("}}")
    code = inner[3:-2].replace("&&", " and ").replace("||", " or ").replace("\n", " ")
    code = code.replace("github.event_name", "event_name")
    code = code.replace("github.event.issue.number", "number")
    code = code.replace("format(", "fmt(")
    names = {
        "event_name": event_name,
        "number": number,
        "fmt": lambda text, *args: text.format(*args),
    }
    return str(eval(code, {"__builtins__": {}}, names))  # noqa: S307 - our own file


def test_example_workflow():
    import yaml

    flow = yaml.safe_load((ROOT / "docs" / "workflow.yml").read_text(encoding="utf-8"))
    on = flow[True]  # YAML 1.1 reads the key `on` as true
    assert on["issues"] == {"types": ["opened"]} and on["issue_comment"] == {"types": ["created"]}
    assert on["schedule"] == [{"cron": "*/15 * * * *"}] and "workflow_dispatch" in on
    assert flow["permissions"] == {}  # granted on the job only
    assert flow["jobs"]["triage"]["permissions"] == {
        "issues": "write",
        "contents": "read",
        "discussions": "read",
    }
    assert "concurrency" not in flow  # on the job: a skipped job takes no place in the queue
    job = flow["jobs"]["triage"]
    assert job["concurrency"]["cancel-in-progress"] is False
    group = job["concurrency"]["group"]
    groups = {
        (name, number): concurrency_group(group, name, number)
        for name, number in [
            ("issues", 5),
            ("issues", 6),
            ("issue_comment", 5),
            ("issue_comment", 6),
            ("schedule", None),
            ("workflow_dispatch", None),
        ]
    }
    # one group for every apply run (issue 8 item 2), one per issue for analyze
    assert {v for (name, _), v in groups.items() if name != "issues"} == {"issue-assistant-apply"}
    assert groups[("issues", 5)] == "issue-assistant-analyze-5" != groups[("issues", 6)]
    steps = flow["jobs"]["triage"]["steps"]
    cache = next(s for s in steps if s.get("uses", "").startswith("actions/cache@"))
    assert cache["with"]["path"] == "${{ runner.temp }}/issue-assistant"  # $RUNNER_TEMP inside
    step = next(s for s in steps if s.get("id") == "assistant")
    assert step["with"]["anthropic-api-key"] == "${{ secrets.ANTHROPIC_API_KEY }}"
