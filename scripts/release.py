#!/usr/bin/env python3
"""The release's checks and notes (run by .github/workflows/release.yml; standard library only).

    python3 scripts/release.py check [--tag vX.Y.Z] [--repository OWNER/NAME]
    python3 scripts/release.py notes X.Y.Z

`check` fails, naming what to change, unless the tag, `version` in pyproject.toml and
`__version__` agree, CHANGELOG.md has a dated section for the version, the repository named by
`[project.urls] Repository` is the one releasing, and action.yml pulls that repository's image of
the major version; it prints `version=X.Y.Z` and `image=ghcr.io/owner/name` (for
$GITHUB_OUTPUT). `notes` prints the CHANGELOG.md section of a version, without its heading.
"""

from __future__ import annotations

import argparse
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: `## 1.2.0 - 2026-12-01`: a released version; `## Unreleased` collects what comes next
HEADING = re.compile(r"^## (\S+)(?: - (\d{4}-\d{2}-\d{2}))?\s*$", re.MULTILINE)
GITHUB = re.compile(r"^https://github\.com/([\w.-]+/[\w.-]+?)(?:\.git)?/?$")


class ReleaseError(Exception):
    pass


def sections(changelog: str) -> dict[str, tuple[str | None, str]]:
    """version -> (date or None, body) for each `## ` section of the changelog."""
    found: dict[str, tuple[str | None, str]] = {}
    heads = list(HEADING.finditer(changelog))
    for i, head in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(changelog)
        found[head.group(1)] = (head.group(2), changelog[head.end() : end].strip())
    return found


def notes(version: str, root: Path = ROOT) -> str:
    path = root / "CHANGELOG.md"
    date, body = sections(path.read_text(encoding="utf-8")).get(version, (None, ""))
    if date is None:
        raise ReleaseError(
            f"{path.name}: no section `## {version} - YYYY-MM-DD`: rename `## Unreleased` to it "
            "(with the day of the release) before tagging"
        )
    if not body:
        raise ReleaseError(f"{path.name}: the section of {version} is empty: write its notes")
    return body + "\n"


def check(tag: str, repository: str, root: Path = ROOT) -> tuple[str, str]:
    """(version, image without tag) of a release that passes every check."""
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    version = project["version"]
    init = (root / "issue_assistant" / "__init__.py").read_text(encoding="utf-8")
    match = re.search(r'^__version__ = "([^"]+)"', init, re.MULTILINE)
    if match is None or match.group(1) != version:
        raise ReleaseError(
            f"issue_assistant/__init__.py: __version__ is {match and match.group(1)!r} but "
            f"pyproject.toml says {version!r}: set both"
        )
    if tag and tag != f"v{version}":
        raise ReleaseError(f"tag {tag} but pyproject.toml says {version}: tag v{version}")
    url = project.get("urls", {}).get("Repository", "")
    named = GITHUB.match(url)
    if named is None:
        raise ReleaseError(
            "pyproject.toml: [project.urls] Repository must be https://github.com/OWNER/NAME"
        )
    if repository and named.group(1).lower() != repository.lower():
        raise ReleaseError(
            f"pyproject.toml names {named.group(1)} but this is {repository}: set [project.urls] "
            f'Repository = "https://github.com/{repository}" (init writes it into workflows)'
        )
    image = f"ghcr.io/{named.group(1).lower()}"
    major = "v" + version.split(".", 1)[0]
    action = (root / "action.yml").read_text(encoding="utf-8")
    pulls = re.search(r"^  image: (\S+)\s*$", action, re.MULTILINE)
    if pulls is None or pulls.group(1) != f"docker://{image}:{major}":
        raise ReleaseError(
            f"action.yml: runs.image must be docker://{image}:{major} (the newest {major} image)"
        )
    notes(version, root)
    return version, image


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    checking = sub.add_parser("check", help="check a release before it is built")
    checking.add_argument("--tag", default="", help="the pushed tag (vX.Y.Z)")
    checking.add_argument("--repository", default="", help="OWNER/NAME releasing")
    writing = sub.add_parser("notes", help="print the changelog section of a version")
    writing.add_argument("version")
    args = parser.parse_args(argv)
    try:
        if args.command == "notes":
            print(notes(args.version), end="")
        else:
            version, image = check(args.tag, args.repository)
            print(f"version={version}\nimage={image}")
    except ReleaseError as exc:
        print(f"release: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
