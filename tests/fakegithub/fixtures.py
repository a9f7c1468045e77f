"""Pytest fixtures: a running fake GitHub and a `GitHubTracker` talking to it (no waits)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from issue_assistant.tracker.client import Throttle, github_retry
from issue_assistant.tracker.github_tracker import GitHubTracker
from tests.fakegithub.server import FakeGitHub

TOKEN = "test-token"


def make_tracker(server: FakeGitHub, **kwargs: object) -> GitHubTracker:
    """A tracker for `server` with test settings: no throttle, immediate retries, 5 s wait bound."""
    options: dict[str, object] = {
        "base_url": server.base_url,
        "throttle": Throttle(0, 0),
        "retry": github_retry(total=3, backoff_factor=0, max_wait=5),
    }
    options.update(kwargs)
    return GitHubTracker(server.full_name, TOKEN, **options)  # type: ignore[arg-type]


@pytest.fixture
def fake_github() -> Iterator[FakeGitHub]:
    """A fresh fake GitHub for `octo/repo` on a free port, stopped after the test."""
    with FakeGitHub("octo/repo", token=TOKEN) as server:
        yield server


@pytest.fixture
def github_tracker(fake_github: FakeGitHub) -> GitHubTracker:
    """A `GitHubTracker` over `fake_github`."""
    return make_tracker(fake_github)
