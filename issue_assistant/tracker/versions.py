"""Which release a reporter names, and whether a newer one was out at the moment.

Never a guess: a version counts only when it is one of the repository's release tags, or follows
the project's name ("tinyparse 1.1.0", "datasets==2.3.0") or the word "version" with nothing
else named; and the note needs the release list of the moment.
"""

from __future__ import annotations

import re

from issue_assistant.tracker.models import Release

_VERSION = re.compile(r"(?<![\w.])v?(\d+(?:\.\d+){1,3})(?![\w.]*\d)")
_NUMBERS = re.compile(r"\d+(?:\.\d+)*")
_OTHER = re.compile(r"\b(python|node|npm|pip|java|jdk|go|rust|os|ubuntu|macos|windows)\b", re.I)


def parse(text: str) -> tuple[int, ...] | None:
    """`v1.2.0` / `release-1.2` / `1.2.0rc1` -> (1, 2, 0); None without a dotted number."""
    m = _NUMBERS.search(text)
    if m is None or "." not in m.group(0):
        return None
    return tuple(int(p) for p in m.group(0).split("."))


def _padded(v: tuple[int, ...]) -> tuple[int, ...]:
    return v + (0,) * (4 - len(v))


def latest(releases: list[Release]) -> Release | None:
    """The newest stable release with a version number in its tag (newest published first)."""
    stable = [r for r in releases if not r.prerelease and parse(r.tag)]
    return max(stable, key=lambda r: (_padded(parse(r.tag) or ()), r.published_at), default=None)


def named_version(text: str, project: str, releases: list[Release]) -> tuple[int, ...] | None:
    """The project version the reporter names, or None when none is named for sure."""
    known = {_padded(v) for r in releases if (v := parse(r.tag))}
    name = re.escape(project.lower()).replace(r"\-", "[-_ ]?").replace("_", "[-_ ]?")
    for line in text.splitlines():
        for m in _VERSION.finditer(line):
            version = tuple(int(p) for p in m.group(1).split("."))
            before = line[max(0, m.start() - 40) : m.start()].lower()
            if re.search(name, before):
                return version
            if _OTHER.search(before):
                continue
            if _padded(version) in known or re.search(r"\bversion\b", before):
                return version
    return None


def version_note(text: str, project: str, releases: list[Release] | None) -> str | None:
    """'The latest release is X ...' when the reporter names an older version; else None."""
    if not releases:
        return None
    newest = latest(releases)
    named = named_version(text, project, releases)
    if newest is None or named is None:
        return None
    newest_v = parse(newest.tag)
    if newest_v is None or _padded(named) >= _padded(newest_v):
        return None
    shown = ".".join(map(str, named))
    return (
        f"The latest release is {newest.tag} (published {newest.published_at:%Y-%m-%d}); "
        f"you mention {shown}. Does the problem still happen with {newest.tag}?"
    )
