"""Cassettes pinning the exact requests of one Action `analyze` run and one `apply` run.

Recorded against the fake GitHub on a fixed port; replayed offline (`--record-mode=none`, the
default in pyproject), where any request not in the cassette, in another order or with another
body fails. To record again after an intended change:

    pytest tests/test_cassettes_action.py --record-mode=rewrite
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from issue_assistant import action
from issue_assistant.comment import Plan, extract_plan, render_comment
from issue_assistant.decision import Duplicate
from tests.fakegithub import FakeGitHub
from tests.fakegithub.fixtures import TOKEN, make_tracker
from tests.test_action import BOT, DECISION, NOW, PENDING, REPO, environment, event, outputs, seed

PORT = 18741
BASE = f"/repos/{REPO}"


@pytest.fixture(scope="module")
def vcr_cassette_dir() -> str:
    return str(Path(__file__).parent / "cassettes" / "action")


@pytest.fixture
def vcr_config() -> dict:
    return {
        "filter_headers": ["authorization", "user-agent"],
        "match_on": ["method", "scheme", "host", "port", "path", "query", "body"],
        "allowed_hosts": ["127.0.0.1"],
    }


@pytest.fixture
def gh(record_mode):
    """The fake GitHub on a fixed port (cassette URLs include it), started only to record."""
    server = FakeGitHub(REPO, port=PORT, token=TOKEN)
    seed(server)
    if record_mode == "none":
        server.base_url = f"http://127.0.0.1:{PORT}"
        yield server
        return
    with server:
        yield server


def requests_of(cassette) -> list[tuple[str, str]]:
    return [(r.method, unquote(urlsplit(r.uri).path)) for r in cassette.requests]


@pytest.mark.vcr
def test_analyze_run_requests(gh, tmp_path, fake_engine, vcr):
    fake_engine.enqueue(DECISION)
    env = environment(tmp_path, "analyze", "issues", event(tmp_path, "issues/opened.payload.json"))
    assert action.run(env, tracker=make_tracker(gh), now=NOW) == 0
    assert requests_of(vcr) == [
        ("GET", f"{BASE}/issues/3"),
        ("GET", f"{BASE}/issues/3/comments"),
        ("GET", BASE),
        ("GET", f"{BASE}/labels"),
        ("GET", f"{BASE}/issues"),  # candidates come from the index, not one GET each
        ("GET", f"{BASE}/releases"),  # the newest page only
        ("POST", "/graphql"),  # the discussions changed since the last run (here: all)
        ("GET", f"{BASE}/issues/1"),  # the proposed duplicate, still an issue here?
        ("POST", f"{BASE}/issues/3/comments"),
        ("GET", f"{BASE}/issues/3/comments"),  # the oldest assistant comment is the claim
        ("POST", f"{BASE}/issues/3/labels"),
    ]
    assert vcr.all_played or vcr.record_mode != "none"
    posted = json.loads(vcr.requests[-3].body)["body"]
    plan = extract_plan(posted)
    assert plan.labels() == ["area: docs", "p2"] and plan.created_at == NOW
    assert json.loads(vcr.requests[-1].body) == {"labels": [PENDING]}
    assert outputs(tmp_path)["comment-url"].endswith(f"/{REPO}/issues/3#issuecomment-1001")
    assert all("authorization" not in r.headers for r in vcr.requests)


@pytest.mark.vcr
def test_apply_run_requests(gh, tmp_path, vcr):
    plan = Plan(
        repository=REPO,
        issue=3,
        reporter="Codertocat",
        created_at=NOW,
        areas=["area: docs"],
        priority="p2",
        duplicate=Duplicate(number=1, confidence=0.9),
        questions=["Which page?"],
        engine="fake",
        labels_before=["bug"],
    )
    comment = gh.add_comment(3, render_comment(plan), BOT)
    gh.issues[3].labels.append(PENDING)
    gh.add_reaction(comment, "rita", "+1")  # read only: ignored
    gh.add_reaction(comment, "maria", "+1")
    path = tmp_path / "schedule.json"
    path.write_text('{"schedule": "*/15 * * * *"}')
    env = environment(tmp_path, "apply", "schedule", path)
    assert action.run(env, tracker=make_tracker(gh), now=NOW) == 0
    assert requests_of(vcr) == [
        ("GET", f"{BASE}/issues"),
        ("GET", f"{BASE}/issues/3/comments"),
        ("GET", BASE),
        ("GET", f"{BASE}/labels"),
        ("GET", f"{BASE}/issues/comments/{comment}/reactions"),
        ("GET", f"{BASE}/collaborators/rita/permission"),
        ("GET", f"{BASE}/collaborators/maria/permission"),
        # a vote: claim the comment (👀), then look again under the claim
        ("POST", f"{BASE}/issues/comments/{comment}/reactions"),
        ("GET", f"{BASE}/issues/3"),
        ("GET", f"{BASE}/issues/3/comments"),
        ("GET", f"{BASE}/issues/comments/{comment}/reactions"),
        ("GET", f"{BASE}/issues/1"),
        # the labels read again right before the write and right after (a person's wins)
        ("GET", f"{BASE}/issues/3"),
        ("POST", f"{BASE}/issues/3/labels"),
        ("GET", f"{BASE}/issues/3"),
        ("POST", f"{BASE}/issues/3/comments"),
        ("GET", f"{BASE}/issues/3"),  # still open right before the close
        ("PATCH", f"{BASE}/issues/3"),
        ("PATCH", f"{BASE}/issues/comments/{comment}"),
        # the claim is withdrawn before the pending label: a sweep then finds what is left
        ("DELETE", f"{BASE}/issues/comments/{comment}/reactions/{comment + 3}"),
        ("DELETE", f"{BASE}/issues/3/labels/{PENDING}"),
        # the sweep's follow-up: the open issues waiting for the reporter's answer (none)
        ("GET", f"{BASE}/issues"),
    ]
    assert vcr.all_played or vcr.record_mode != "none"
    assert json.loads(vcr.requests[7].body) == {"content": "eyes"}
    assert json.loads(vcr.requests[13].body) == {"labels": ["area: docs", "p2"]}
    assert json.loads(vcr.requests[15].body) == {"body": "Duplicate of #1"}
    assert json.loads(vcr.requests[17].body) == {"state": "closed", "state_reason": "duplicate"}
    edited = extract_plan(json.loads(vcr.requests[18].body)["body"])
    assert edited.status == "approved" and edited.history[-1].actor == "maria"
    [result] = json.loads(outputs(tmp_path)["decision"])
    assert result["status"] == "approved"
