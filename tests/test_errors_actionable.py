"""Issue 17, "Errors a person can act on": one line with a hint and the right exit code, through
the real CLI and the real PyGithub client, against the fake GitHub or a closed port."""

from __future__ import annotations

import json
import logging
import socket
from pathlib import Path

import pytest
import urllib3

from issue_assistant.cli import main
from issue_assistant.errors import GitHubError
from issue_assistant.tracker import fetch
from issue_assistant.tracker.client import Throttle, github_retry
from issue_assistant.tracker.fetch import fetch_snapshot, partial_path
from issue_assistant.tracker.snapshot import read_snapshot
from tests.fakegithub import FakeGitHub
from tests.fakegithub.fixtures import TOKEN, make_tracker
from tests.test_fetch_snapshot import quiet, small_repo

LABELS = Path(__file__).parent / "data" / "action" / "labels.toml"


@pytest.fixture
def closed_port() -> int:
    """A port on 127.0.0.1 nothing listens on (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def gh(monkeypatch):
    with FakeGitHub("octo/repo", token=TOKEN) as server:
        small_repo(server)
        monkeypatch.setenv("GITHUB_API_URL", server.base_url)
        monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
        monkeypatch.delenv("GH_TOKEN", raising=False)
        monkeypatch.setattr(fetch, "FETCH_THROTTLE", Throttle(0, 0))
        yield server


def one_line(capsys) -> str:
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert len(err) == 1, err
    return err[0]


@pytest.mark.parametrize(
    "argv",
    [
        ["snapshot", "-R", "octo/repo", "-o", "{tmp}/s.jsonl"],
        ["evaluate", "-R", "octo/repo", "--labels", str(LABELS), "--report", "{tmp}/r.md"],
        ["apply", "-R", "octo/repo", "--labels", str(LABELS)],
    ],
)
def test_no_network_fails_at_once_in_one_line(argv, closed_port, tmp_path, monkeypatch, capsys):
    """A closed port took 247 s of retries and 8 urllib3 warnings: a refused connection is
    not retried, and the line says what was tried and what to check."""
    monkeypatch.setenv("GITHUB_API_URL", f"http://127.0.0.1:{closed_port}")
    monkeypatch.setenv("GITHUB_TOKEN", "x")
    monkeypatch.chdir(tmp_path)
    sleeps: list[float] = []
    monkeypatch.setattr("time.sleep", sleeps.append)  # any backoff would be seen here
    assert main([a.replace("{tmp}", str(tmp_path)) for a in argv]) == 1
    line = one_line(capsys)
    assert f"cannot reach http://127.0.0.1:{closed_port}: connection refused" in line
    assert "tried once (not retried)" in line and "Check GITHUB_API_URL" in line
    assert "nothing" not in line  # nothing could have been written: no word on writes
    assert sleeps == []


def test_a_refused_token_says_which_and_what_it_needs(gh, tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("GITHUB_TOKEN")
    monkeypatch.setenv("GH_TOKEN", "expired")
    assert main(["snapshot", "-R", "octo/repo", "-o", str(tmp_path / "s.jsonl")]) == 1
    line = one_line(capsys)
    assert "401 Bad credentials" in line and "The token from GH_TOKEN was refused" in line
    assert "Issues" in line and "`repo`" in line
    assert "written" not in line  # a read-only command


def test_nothing_was_written_only_where_a_write_could_have_been(gh, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("GITHUB_TOKEN", "expired")
    argv = ["apply", "-R", "octo/repo", "--labels", str(LABELS)]
    assert main(argv) == 1  # a dry run: no word on writes
    assert "written" not in one_line(capsys)
    assert main([*argv, "--apply"]) == 1
    assert one_line(capsys).count("; nothing was written.") == 1


@pytest.mark.parametrize(
    ("argv", "code"),
    [
        (["apply", "-R", "octo/nope", "--labels", str(LABELS)], 2),
        (["snapshot", "-R", "octo/nope", "-o", "x.jsonl"], 2),
        (["apply", "-R", "octo/repo", "--issue", "99999", "--labels", str(LABELS)], 2),
        (["analyze", "-R", "octo/repo", "--issue", "99999", "--labels", str(LABELS)], 2),
    ],
)
def test_missing_repository_or_issue_one_wording_and_exit_codes(
    gh, argv, code, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ISSUE_ASSISTANT_CACHE", str(tmp_path / "cache"))
    assert main(argv) == code
    line = one_line(capsys)
    assert "no access, or private?" in line
    if "octo/nope" in argv:
        assert "octo/nope: no such repository" in line
    else:
        assert "octo/repo#99999: no such issue" in line


def test_server_errors_are_retried_and_the_line_says_so(gh):
    gh.fail_next("GET", r"^/repos/octo/repo$", 502, times=10)
    tracker = make_tracker(gh, retry=github_retry(total=3, backoff_factor=0.01, max_wait=5))
    with pytest.raises(GitHubError) as err:
        tracker.repository  # noqa: B018
    assert err.value.status == 502 and "(tried 4 times over 0 s)" in err.value.line()


def test_a_rate_limit_wait_is_shown_with_its_end(gh, tmp_path, monkeypatch, caplog):
    """`snapshot` sat at 47/109, "ETA 0:00:14", for 10 min: the wait is said, with its end."""
    monkeypatch.setattr(urllib3.util.retry.time, "sleep", lambda s: None)
    gh.fail_secondary_rate_limit("GET", r"/issues/3/timeline$", retry_after=600)
    caplog.set_level("INFO")
    console = quiet()
    tracker = make_tracker(gh, retry=github_retry(total=3, max_wait=4000))
    fetch_snapshot(tracker, tmp_path / "s.jsonl", console=console)
    lines = console.file.getvalue().splitlines()  # type: ignore[attr-defined]
    [wait] = [ln for ln in lines if "waiting" in ln]
    assert wait.startswith("GitHub: secondary rate limit (403); waiting 600 s, until ")
    assert wait.endswith(" UTC")
    # without a progress display it is a warning of the run's log
    caplog.clear()
    gh.fail_secondary_rate_limit("GET", r"^/repos/octo/repo$", retry_after=30)
    make_tracker(gh, retry=github_retry(total=3, max_wait=4000)).repository  # noqa: B018
    [record] = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert "waiting 30 s, until" in record.getMessage()


def test_pygithub_lines_are_not_printed_twice():
    github_logger = logging.getLogger("github")
    assert github_logger.handlers == [] and github_logger.level == logging.NOTSET


def test_optional_parts_that_fail_are_unknown_and_the_snapshot_goes_on(gh, tmp_path, capsys):
    refused = {"message": "Resource not accessible by integration"}
    gh.fail_next("POST", r"^/graphql$", 403, body=refused, times=100)  # discussions, links
    gh.fail_next("GET", r"/releases$", 403, body=refused, times=100)
    out = tmp_path / "s.jsonl"
    assert main(["snapshot", "-R", "octo/repo", "-o", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["unknown"] == ["releases", "discussions"]
    assert summary["issues"] == 5 and summary["releases"] is None
    snap = read_snapshot(out)
    assert snap.releases() is None and snap.discussions() is None
    assert len(snap) == 6


def test_an_interrupted_snapshot_says_how_it_resumes(gh, tmp_path, monkeypatch, capsys):
    real = fetch._with_history
    calls = []

    def interrupted(tracker, issue, state, pattern):  # noqa: ANN001, ANN202
        calls.append(issue.number)
        if len(calls) == 4:
            raise KeyboardInterrupt
        return real(tracker, issue, state, pattern)

    monkeypatch.setattr(fetch, "_with_history", interrupted)
    out = tmp_path / "s.jsonl"
    assert main(["snapshot", "-R", "octo/repo", "-o", str(out)]) == 130
    line = capsys.readouterr().err.splitlines()[-1]  # after the progress lines
    assert f"3 issues fetched so far are kept in {partial_path(out)}" in line
    assert "run the same command again to go on from there" in line
    monkeypatch.setattr(fetch, "_with_history", real)
    gh.clear_requests()
    assert main(["snapshot", "-R", "octo/repo", "-o", str(out)]) == 0
    assert len([p for p in gh.paths() if p.endswith("/timeline")]) == 3  # the rest only
