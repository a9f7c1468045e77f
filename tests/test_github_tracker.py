"""GitHubTracker through the real PyGithub client against the local fake GitHub."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest

from issue_assistant.errors import GitHubError
from issue_assistant.tracker.client import github_retry
from issue_assistant.tracker.github_tracker import GitHubTracker
from tests.fakegithub import FakeGitHub, fixtures
from tests.fakegithub.fixtures import make_tracker

fake_github = fixtures.fake_github
github_tracker = fixtures.github_tracker

T0 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def vcr_config() -> dict:
    return {"allowed_hosts": ["127.0.0.1"]}


def at(minutes: int) -> datetime:
    return T0.replace(minute=minutes % 60, hour=12 + minutes // 60)


def test_all_issues_paginates_oldest_first_without_refetching(
    fake_github: FakeGitHub, github_tracker: GitHubTracker
) -> None:
    for n in range(1, 251):
        fake_github.add_issue(
            f"issue {n}",
            f"body {n}",
            user="dependabot[bot]" if n % 50 == 0 else "alice",
            labels=["bug"] if n % 3 == 0 else [],
            state="closed" if n % 4 == 0 else "open",
            state_reason="not_planned" if n % 4 == 0 else None,
            is_pull_request=n % 5 == 0,
        )

    issues = list(github_tracker.all_issues())

    assert [i.number for i in issues] == list(range(1, 251))
    assert fake_github.paths() == ["/repos/octo/repo/issues"] * 3  # 100 + 100 + 50, no refetch
    pages = [r.query for r in fake_github.requests]
    assert pages[0] == {"state": "all", "sort": "created", "direction": "asc", "per_page": "100"}
    assert [q.get("page") for q in pages] == [None, "2", "3"]
    twelve = issues[11]
    assert (twelve.title, twelve.body, twelve.labels, twelve.state) == (
        "issue 12",
        "body 12",
        ["bug"],
        "closed",
    )
    assert twelve.state_reason == "not_planned" and twelve.closed_at is not None
    assert twelve.events is None and twelve.comments is None  # unknown, not empty
    assert sum(i.is_pull_request for i in issues) == 50
    assert issues[49].user.is_bot and issues[49].user.type == "Bot"


def test_all_issues_since_asks_github_for_recent_updates(
    fake_github: FakeGitHub, github_tracker: GitHubTracker
) -> None:
    fake_github.add_issue("old", created_at=at(0))
    fake_github.add_issue("new", created_at=at(30))
    fake_github.add_issue("old but commented", created_at=at(1))
    fake_github.add_comment(3, "still broken", created_at=at(40))

    recent = list(github_tracker.all_issues(since=at(20)))

    assert [i.title for i in recent] == ["old but commented", "new"]
    assert fake_github.requests[0].query["since"] == "2024-03-01T12:20:00Z"


def test_get_issue_with_history_converts_events_and_comments(
    fake_github: FakeGitHub, github_tracker: GitHubTracker
) -> None:
    n = fake_github.add_issue("Crash", "trace", created_at=at(0), author_association="NONE")
    fake_github.add_event(n, "labeled", "alice", created_at=at(0), label="bug")
    fake_github.add_event(n, "labeled", "maint", created_at=at(5), label="area:cli")
    fake_github.add_event(n, "unlabeled", "maint", created_at=at(6), label="bug")
    cid = fake_github.add_comment(
        n, "Duplicate of #1", "maint", created_at=at(7), author_association="MEMBER"
    )
    fake_github.add_event(n, "marked_as_duplicate", "maint", created_at=at(7))
    fake_github.add_event(n, "closed", "maint", created_at=at(8), state_reason="duplicate")
    fake_github.add_event(n, "subscribed", "maint", created_at=at(9))  # not history: dropped

    plain = github_tracker.get_issue(n)
    issue = github_tracker.get_issue(n, history=True)

    assert plain.events is None and plain.comments is None
    assert [(e.event, e.label, e.state_reason) for e in issue.events or []] == [
        ("labeled", "bug", None),
        ("labeled", "area:cli", None),
        ("unlabeled", "bug", None),
        ("marked_as_duplicate", None, None),
        ("closed", None, "duplicate"),
    ]
    assert all(e.actor is not None for e in issue.events or [])
    (comment,) = issue.comments or []
    assert (comment.id, comment.body, comment.user.login) == (cid, "Duplicate of #1", "maint")
    assert comment.author_association == "MEMBER" and comment.created_at == at(7)
    assert comment.url == f"{fake_github.base_url}/octo/repo/issues/{n}#issuecomment-{cid}"
    with pytest.raises(KeyError):
        github_tracker.get_issue(99)


@pytest.mark.parametrize("role", ["admin", "maintain", "write", "triage", "read", "none"])
def test_permission_is_the_exact_role(
    fake_github: FakeGitHub, github_tracker: GitHubTracker, role: str
) -> None:
    fake_github.set_permission("carol", role)

    assert github_tracker.permission("carol") == role
    assert github_tracker.permission("carol") == role  # cached
    assert fake_github.paths() == ["/repos/octo/repo/collaborators/carol/permission"]


def test_permission_of_unknown_user_is_none(github_tracker: GitHubTracker) -> None:
    assert github_tracker.permission("nobody-at-all") == "none"


def test_repository_has_every_label_and_unknown_maintainers(
    fake_github: FakeGitHub, github_tracker: GitHubTracker
) -> None:
    fake_github.add_label("bug", "d73a4a", "Something isn't working")
    for k in range(130):
        fake_github.add_label(f"area:{k:03}")

    repo = github_tracker.repository

    assert repo.full_name == "octo/repo" and repo.maintainers is None
    assert len(repo.labels) == 131
    assert repo.labels[0].model_dump() == {
        "name": "bug",
        "description": "Something isn't working",
        "color": "d73a4a",
    }
    assert fake_github.paths() == ["/repos/octo/repo"] + ["/repos/octo/repo/labels"] * 2


def test_writes_are_exactly_the_requests_made(
    fake_github: FakeGitHub, github_tracker: GitHubTracker
) -> None:
    n = fake_github.add_issue("Crash", labels=["needs-triage"])

    github_tracker.add_labels(n, ["bug", "area: cli"])
    github_tracker.add_labels(n, [])  # nothing to do: no request
    github_tracker.remove_label(n, "needs-triage")
    github_tracker.remove_label(n, "not there: really")  # 404 is fine
    comment = github_tracker.create_comment(n, "Thanks! Proposed: bug")
    github_tracker.edit_comment(comment.id or 0, "Thanks! Applied: bug")
    github_tracker.close(n, "duplicate")

    path = f"/repos/octo/repo/issues/{n}"
    assert fake_github.writes == [
        ("POST", f"{path}/labels", {"labels": ["bug", "area: cli"]}),
        ("DELETE", f"{path}/labels/needs-triage", None),
        ("DELETE", f"{path}/labels/not there: really", None),
        ("POST", f"{path}/comments", {"body": "Thanks! Proposed: bug"}),
        (
            "PATCH",
            f"/repos/octo/repo/issues/comments/{comment.id}",
            {"body": "Thanks! Applied: bug"},
        ),
        ("PATCH", path, {"state": "closed", "state_reason": "duplicate"}),
    ]
    assert comment.user.login == "github-actions[bot]" and comment.id is not None
    assert comment.url == f"{fake_github.base_url}/octo/repo/issues/{n}#issuecomment-{comment.id}"
    issue = github_tracker.get_issue(n, history=True)
    assert issue.labels == ["bug", "area: cli"]
    assert (issue.state, issue.state_reason) == ("closed", "duplicate")
    assert [c.body for c in issue.comments or []] == ["Thanks! Applied: bug"]
    assert [e.event for e in issue.events or []] == ["labeled", "labeled", "unlabeled", "closed"]


def test_reactions_and_labelled_open_issues(
    fake_github: FakeGitHub, github_tracker: GitHubTracker
) -> None:
    a = fake_github.add_issue("a", labels=["triage:proposed"])
    fake_github.add_issue("b", labels=["triage:proposed"], state="closed")
    c = fake_github.add_issue("c", labels=["bug", "triage:proposed"])
    fake_github.add_issue("d", labels=["bug"])
    cid = fake_github.add_comment(a, "proposal", "github-actions[bot]")
    fake_github.add_reaction(cid, "maint", "+1")
    fake_github.add_reaction(cid, "alice", "-1")
    github_tracker.add_reaction(cid, "eyes")
    github_tracker.add_reaction(cid, "eyes")  # GitHub keeps one

    reactions = github_tracker.comment_reactions(cid)

    assert [(r.user.login, r.content) for r in reactions] == [
        ("maint", "+1"),
        ("alice", "-1"),
        ("github-actions[bot]", "eyes"),
    ]
    assert all(r.created_at is not None for r in reactions)
    proposed = github_tracker.issues_with_label("triage:proposed")
    assert [i.number for i in proposed] == [a, c]
    assert [x.id for x in github_tracker.list_comments(a)] == [cid]


def test_secondary_rate_limit_is_waited_out(
    fake_github: FakeGitHub, github_tracker: GitHubTracker
) -> None:
    n = fake_github.add_issue("Crash")
    fake_github.fail_secondary_rate_limit("POST", r"/issues/\d+/comments$", retry_after=1)

    start = time.monotonic()
    comment = github_tracker.create_comment(n, "hello")

    assert time.monotonic() - start >= 1.0
    assert [(r.method, r.status) for r in fake_github.requests] == [("POST", 403), ("POST", 201)]
    assert [c.id for c in github_tracker.list_comments(n)] == [comment.id]


def test_server_errors_are_retried_then_succeed(
    fake_github: FakeGitHub, github_tracker: GitHubTracker
) -> None:
    n = fake_github.add_issue("Crash")
    fake_github.fail_next("GET", rf"/issues/{n}$", 500, times=2)
    fake_github.fail_next("PATCH", rf"/issues/{n}$", 502)

    assert github_tracker.get_issue(n).title == "Crash"
    github_tracker.close(n, "completed")

    assert [(r.method, r.status) for r in fake_github.requests] == [
        ("GET", 500),
        ("GET", 500),
        ("GET", 200),
        ("PATCH", 502),
        ("PATCH", 200),
    ]
    assert fake_github.issues[n].state == "closed"


def test_server_errors_past_the_retries_give_a_github_error(fake_github: FakeGitHub) -> None:
    tracker = make_tracker(fake_github, retry=github_retry(total=2, backoff_factor=0))
    fake_github.add_issue("Crash")
    fake_github.fail_next("GET", r"/issues$", 503, body={"message": "Service Unavailable"}, times=9)

    with pytest.raises(GitHubError) as err:
        list(tracker.all_issues())

    assert (err.value.status, err.value.method, err.value.path) == (
        503,
        "GET",
        "/repos/octo/repo/issues",
    )
    assert "Service Unavailable" in str(err.value)
    assert len(fake_github.requests) == 3


def test_404_and_422_are_clear_errors_and_nothing_else_is_written(
    fake_github: FakeGitHub, github_tracker: GitHubTracker
) -> None:
    n = fake_github.add_issue("Crash")

    with pytest.raises(GitHubError) as missing:
        github_tracker.create_comment(404, "hello")
    with pytest.raises(GitHubError) as invalid:
        github_tracker.close(n, "because")
    with pytest.raises(GitHubError) as empty:
        github_tracker.create_comment(n, "")

    assert str(missing.value) == (
        "GitHub POST /repos/octo/repo/issues/404/comments failed: 404 Not Found"
    )
    assert invalid.value.status == 422
    assert str(invalid.value) == (
        "GitHub PATCH /repos/octo/repo/issues/1 failed: 422 Validation Failed "
        "(Issue state_reason invalid)"
    )
    assert "IssueComment body missing_field" in str(empty.value)
    assert [w[0] for w in fake_github.writes] == ["POST", "PATCH", "POST"]  # one try each
    assert fake_github.issues[n].state == "open" and not fake_github.comments


def test_a_lost_answer_does_not_post_the_comment_twice(
    fake_github: FakeGitHub, github_tracker: GitHubTracker
) -> None:
    n = fake_github.add_issue("Crash")
    fake_github.fail_next("POST", r"/comments$", 502, apply=True)  # posted, answer lost
    first = github_tracker.create_comment(n, "one")
    fake_github.fail_next("POST", r"/comments$", 0, apply=True, disconnect=True)
    second = github_tracker.create_comment(n, "two")
    fake_github.fail_next("POST", r"/comments$", 500)  # not posted: post again
    third = github_tracker.create_comment(n, "three")

    assert [c.body for c in fake_github.comments.values()] == ["one", "two", "three"]
    assert [first.id, second.id, third.id] == list(fake_github.comments)
    assert [w[0] for w in fake_github.writes] == ["POST", "POST", "POST", "POST"]


def test_adding_labels_is_repeated_after_a_server_error(
    fake_github: FakeGitHub, github_tracker: GitHubTracker
) -> None:
    n = fake_github.add_issue("Crash")
    fake_github.fail_next("POST", r"/labels$", 500, apply=True)

    github_tracker.add_labels(n, ["bug"])

    assert fake_github.issues[n].labels == ["bug"]
    assert [(r.method, r.status) for r in fake_github.requests] == [("POST", 500), ("POST", 200)]


def test_waiting_is_bounded(fake_github: FakeGitHub, github_tracker: GitHubTracker) -> None:
    n = fake_github.add_issue("Crash")
    fake_github.fail_primary_rate_limit("GET", rf"/issues/{n}$", reset_in=3600)
    fake_github.fail_secondary_rate_limit("POST", r"/comments$", retry_after=60)

    start = time.monotonic()
    with pytest.raises(GitHubError) as primary:
        github_tracker.get_issue(n)
    with pytest.raises(GitHubError) as secondary:
        github_tracker.create_comment(n, "hello")

    assert time.monotonic() - start < 3
    assert primary.value.status == 403 and "API rate limit exceeded" in str(primary.value)
    assert secondary.value.status == 403 and "over the 5 s allowed" in str(secondary.value)
    assert not fake_github.comments


def test_bad_token_is_a_github_error(fake_github: FakeGitHub) -> None:
    tracker = GitHubTracker("octo/repo", "wrong", fake_github.base_url, retry=github_retry(total=0))
    with pytest.raises(GitHubError) as err:
        _ = tracker.repository
    assert err.value.status == 401 and "Bad credentials" in str(err.value)


def test_the_fake_serves_pygithub_own_objects(fake_github: FakeGitHub) -> None:
    """PyGithub's high-level API works against the fake too (sorting, filters, roles)."""
    from github import Auth, Github

    gh = Github(
        base_url=fake_github.base_url,
        auth=Auth.Token(fixtures.TOKEN),
        retry=None,
        seconds_between_requests=None,
        seconds_between_writes=None,
    )
    a = fake_github.add_issue("a", labels=["bug", "ui"], created_at=at(0))
    b = fake_github.add_issue("b", labels=["bug"], created_at=at(1))
    fake_github.add_issue("c", labels=["ui"], created_at=at(2), state="closed")
    cid = fake_github.add_comment(a, "first", "bob", created_at=at(10))
    fake_github.set_permission("mia", "maintain")
    repo = gh.get_repo("octo/repo")

    by_update = repo.get_issues(state="all", sort="updated", direction="desc")
    assert [i.number for i in by_update] == [a, 3, b]
    assert [i.number for i in repo.get_issues(labels=["bug", "ui"])] == [a]
    assert [i.number for i in repo.get_issues(state="closed")] == [3]
    comment = repo.get_issue(a).get_comments()[0]
    comment.create_reaction("heart")
    assert [r.content for r in comment.get_reactions()] == ["heart"]
    assert comment.id == cid and comment.user.login == "bob"
    assert repo.get_collaborator_permission("mia") == "write"  # the legacy value
    assert repo.get_collaborator_role_name("mia") == "maintain"
    assert gh.get_rate_limit().resources.core.remaining == 4999


def test_a_claim_is_made_once_and_withdrawn(
    fake_github: FakeGitHub, github_tracker: GitHubTracker
) -> None:
    n = fake_github.add_issue("Crash")
    cid = fake_github.add_comment(n, "the proposal", "github-actions[bot]")
    first = github_tracker.claim(cid)
    second = make_tracker(fake_github).claim(cid)  # another run
    assert first.new and not second.new and first.id == second.id
    assert second.created_at is not None
    [reaction] = github_tracker.comment_reactions(cid)
    assert (reaction.content, reaction.id, reaction.user.login) == (
        "eyes",
        first.id,
        "github-actions[bot]",
    )
    github_tracker.release(cid, first.id)
    github_tracker.release(cid, first.id)  # already gone: fine
    assert fake_github.reactions == []
    assert github_tracker.claim(cid).new


def test_a_claim_whose_answer_was_lost_is_this_runs(
    fake_github: FakeGitHub, github_tracker: GitHubTracker
) -> None:
    n = fake_github.add_issue("Crash")
    cid = fake_github.add_comment(n, "the proposal", "github-actions[bot]")
    fake_github.fail_next("POST", r"/reactions$", 0, apply=True, disconnect=True)
    claim = github_tracker.claim(cid)
    assert claim.new and len(fake_github.reactions) == 1
    fake_github.fail_next("POST", r"/reactions$", 422)
    with pytest.raises(GitHubError) as err:
        github_tracker.claim(cid)
    assert err.value.status == 422
