"""A local fake of the GitHub REST API for tests, driven through the real PyGithub client.

    with FakeGitHub("octo/repo") as gh:
        gh.add_issue("Crash on start", labels=["bug"])
        tracker = GitHubTracker("octo/repo", "x", base_url=gh.base_url, ...)

See `server.FakeGitHub` for the endpoints, `fail_next` for injected failures and
`requests`/`writes` for the request log; `fixtures` has the pytest fixtures.
"""

from tests.fakegithub.server import Failure, FakeGitHub, LoggedRequest
from tests.fakegithub.state import RepoState

__all__ = ["Failure", "FakeGitHub", "LoggedRequest", "RepoState"]
