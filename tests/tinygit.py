"""A tiny git repository with squash merges `… (#PR)` at fixed dates, and its tracker snapshot:
the ground-truth builder and the likely-files benchmark run on it."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

from issue_assistant.tracker.models import Issue, Repository, User
from issue_assistant.tracker.snapshot import Snapshot

T0 = datetime(2024, 1, 1, tzinfo=UTC)

CORE = '''"""The core."""


def load(path):
    """Load a file."""
    return open(path).read()


class Store:
    def get(self, key):
        raise KeyError(f"No entry named {key} in the store")

    def put(self, key, value):
        self.data[key] = value
'''

FILES_0 = {
    "src/tiny/__init__.py": '"""tiny."""\n',
    "src/tiny/core.py": CORE,
    "src/tiny/cache.py": '"""Cache."""\n\n\ndef cache_dir():\n    return "~/.cache"\n',
    "tests/test_core.py": "from tiny.core import load\n\n\ndef test_load():\n    assert load\n",
    "docs/index.md": "# tiny\n\nLoads files and keeps a store.\n",
}


def day(n: float) -> datetime:
    return T0 + timedelta(days=n)


class Repo:
    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", "main")

    def git(self, *args: str, when: datetime | None = None) -> str:
        stamp = (when or T0).strftime("%Y-%m-%dT%H:%M:%S+00:00")
        env = {
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@example.com",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.com",
            "GIT_AUTHOR_DATE": stamp,
            "GIT_COMMITTER_DATE": stamp,
            "PATH": "/usr/bin:/bin",
        }
        out = subprocess.run(
            ["git", *args], cwd=self.root, env=env, check=True, capture_output=True, text=True
        )
        return out.stdout.strip()

    def commit(self, files: dict[str, str | None], message: str, when: datetime) -> str:
        for rel, text in files.items():
            f = self.root / rel
            if text is None:
                f.unlink()
                continue
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text(text, encoding="utf-8")
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message, when=when)
        return self.git("rev-parse", "HEAD")


def build(root: Path) -> tuple[Path, dict[str, str]]:
    """The repository and its commits by name."""
    repo = Repo(root)
    shas = {"init": repo.commit(FILES_0, "init", day(0))}
    shas["docs"] = repo.commit({"docs/index.md": "# tiny\n\nA tiny loader.\n"}, "Docs (#2)", day(2))
    fixed = CORE.replace('f"No entry named {key} in the store"', 'f"No entry named {key!r}"')
    shas["fix10"] = repo.commit(
        {
            "src/tiny/core.py": fixed,
            "tests/test_core.py": FILES_0["tests/test_core.py"] + "\n\ndef test_get():\n    pass\n",
            "CHANGELOG.md": "- fixed Store.get\n",
        },
        "Fix the store's error (#11)",
        day(4),
    )
    shas["fix12"] = repo.commit(
        {"src/tiny/cache.py": FILES_0["src/tiny/cache.py"].replace("~/.cache", "/tmp/cache")},
        "Respect the cache folder (#13)",
        day(6),
    )
    shas["late"] = repo.commit({"src/tiny/new.py": "x = 1\n"}, "New module (#17)", day(8))
    return root, shas


def _issue(number: int, title: str, body: str, created: float, **kw: object) -> Issue:
    return Issue(
        number=number,
        title=title,
        body=body,
        user=User(login=f"u{number}"),
        created_at=day(created),
        **kw,  # type: ignore[arg-type]
    )


def snapshot() -> Snapshot:
    closed = {"state": "closed", "closed_at": day(7), "state_reason": "completed"}
    pr = {"is_pull_request": True, "state": "closed", "closed_at": day(7)}
    issues = [
        _issue(
            10,
            "Store.get raises a confusing KeyError",
            "Traceback (most recent call last):\n"
            '  File "/venv/lib/python3.11/site-packages/tiny/core.py", line 11, in get\n'
            "KeyError: 'No entry named foo in the store'\n",
            3,
            **closed,
        ),
        _issue(11, "Fix the store's error", "Fixes #10", 3.5, **pr),
        _issue(12, "The cache folder is ignored", "cache_dir always gives ~/.cache", 5, **closed),
        _issue(13, "Cache", "Closes https://github.com/octo/tiny/issues/12", 5.5, **pr),
        _issue(14, "Never fixed in the history", "nothing", 5, **closed),
        _issue(15, "Open PR", "Fixes #14", 5.2, **pr),  # not in the history: not merged
        _issue(16, "Elsewhere", "Fixes other/repo#12", 5.3, **pr),  # another repository's
    ]
    repo = Repository(full_name="octo/tiny", fetched_at=day(9))
    return Snapshot(repo, issues)
