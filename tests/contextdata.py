"""A small synthetic repository with releases, discussions, fixed_by links and a checkout."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from issue_assistant.tracker.models import (
    Discussion,
    FixedBy,
    Issue,
    Release,
    Repository,
    User,
)
from issue_assistant.tracker.snapshot import Snapshot, write_snapshot

T0 = datetime(2025, 1, 1, tzinfo=UTC)


def day(n: float) -> datetime:
    return T0 + timedelta(days=n)


RELEASES = [
    Release(tag="v1.0.0", name="1.0.0", published_at=day(1), notes="First release."),
    Release(tag="v1.1.0", name="1.1.0", published_at=day(10), notes="Faster parser."),
    Release(tag="v1.2.0", name="1.2.0", published_at=day(30), notes="Cache fixes."),
]

DISCUSSIONS = [
    Discussion(
        number=50,
        title="How do I configure the cache directory?",
        body="I want the parser cache directory somewhere else. Where is it configured?",
        category="Q&A",
        user=User(login="dana"),
        created_at=day(2),
        answer_chosen_at=day(3),
        answer="Set `cache_dir` in config.toml.",
    ),
    Discussion(
        number=51,
        title="Roadmap for plugins",
        body="What plugins are planned?",
        category="Ideas",
        user=User(login="eve"),
        created_at=day(4),
    ),
    Discussion(
        number=52,
        title="Parser crash on empty token stream",
        body="The parser crashes on an empty token stream, anyone seen it?",
        category="Q&A",
        user=User(login="finn"),
        created_at=day(5),
        answer_chosen_at=day(40),
        answer="Fixed in 1.2.0.",
        closed=True,
        closed_at=day(41),
        locked=True,
    ),
]


def _issue(number: int, title: str, body: str, created: float, **kw: object) -> Issue:
    return Issue(
        number=number,
        title=title,
        body=body,
        user=User(login=f"user{number}"),
        created_at=day(created),
        events=[],
        comments=[],
        **kw,  # type: ignore[arg-type]
    )


ISSUES = [
    _issue(
        1,
        "Parser raises IndexError on empty input",
        "Traceback (most recent call last):\n"
        '  File "src/tinyparse/parser.py", line 12, in parse_tokens\n'
        "IndexError: list index out of range\n\nI use version 1.0.0.",
        6,
        labels=["bug", "area: parser"],
        state="closed",
        closed_at=day(7),
        state_reason="completed",
        fixed_by=[FixedBy(number=2, files=["src/tinyparse/parser.py"])],
    ),
    _issue(2, "Fix empty input", "Fixes #1", 6.5, is_pull_request=True, state="closed"),
    _issue(
        3,
        "Cache directory is ignored",
        "The CacheStore ignores cache_dir and writes to the home directory.",
        12,
        labels=["bug", "area: cache"],
        state="closed",
        closed_at=day(13),
        state_reason="completed",
        fixed_by=[FixedBy(number=4, files=["src/tinyparse/cache.py", "docs/cache.md"])],
    ),
    _issue(4, "Respect cache_dir", "Fixes #3", 12.5, is_pull_request=True, state="closed"),
    _issue(
        5,
        "Where do I set the cache directory?",
        "How do I configure the cache directory for the parser? I'm on tinyparse 1.1.0.",
        35,
        labels=["question"],
    ),
]

SOURCES = {
    "src/tinyparse/__init__.py": '"""tinyparse: a tiny parser."""\n',
    "src/tinyparse/parser.py": (
        '"""The token parser."""\n\n\n'
        "def parse_tokens(tokens):\n"
        '    """Parse a token stream into a tree."""\n'
        "    first = tokens[0]  # an empty stream has no first token\n"
        "    return [first]\n"
    ),
    "src/tinyparse/cache.py": (
        '"""The on-disk cache."""\n\n\n'
        "class CacheStore:\n"
        '    """Keeps parsed trees under cache_dir."""\n\n'
        "    def __init__(self, cache_dir=None):\n"
        "        self.cache_dir = cache_dir or '~'\n"
    ),
    "src/tinyparse/lexer.py": (
        '"""Split text into tokens."""\n\n\ndef lex(text):\n    return text.split()\n'
    ),
    "docs/cache.md": "# The cache\n\nParsed trees are kept in `cache_dir`.\n",
    "README.md": "# tinyparse\n\nA tiny parser with a cache.\n",
    "node_modules/leftpad/index.js": "module.exports = function leftpad() { cache_dir }\n",
    "build/generated.py": "cache_dir = 'generated'\n",
}


def repository(includes: tuple[str, ...] = ("releases", "discussions", "fixed_by")) -> Repository:
    return Repository(full_name="octo/tinyparse", fetched_at=day(60), includes=list(includes))


def snapshot() -> Snapshot:
    return Snapshot(repository(), ISSUES, releases=RELEASES, discussions=DISCUSSIONS)


def write(path: Path) -> Path:
    write_snapshot(path, repository(), ISSUES, releases=RELEASES, discussions=DISCUSSIONS)
    return path


def checkout(root: Path, *, git: bool = True) -> Path:
    """The synthetic source tree; with `git`, a repository with one commit and a .gitignore."""
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in SOURCES.items():
        f = root / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text, encoding="utf-8")
    (root / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00binary")
    if git:
        (root / ".gitignore").write_text("build/\nnode_modules/\n", encoding="utf-8")
        env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com"}
        env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
        run = lambda *a: subprocess.run(  # noqa: E731
            ["git", *a],
            cwd=root,
            check=True,
            capture_output=True,
            env={**env, "PATH": "/usr/bin:/bin"},
        )
        run("init", "-q", "-b", "main")
        run("add", "-A")
        run("commit", "-q", "-m", "init")
    return root


@pytest.fixture(scope="module", name="checkout")
def tinyparse_checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The synthetic checkout (a git repository), made once per test module."""
    return checkout(tmp_path_factory.mktemp("co") / "tinyparse")
