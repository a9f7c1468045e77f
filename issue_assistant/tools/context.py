"""Tools over what else the moment knew: releases, similar discussions, the likely files.

Each is offered only where the moment knows it (a release list, discussions, a code index).
"""

from __future__ import annotations

from pydantic import Field

from issue_assistant.render import render
from issue_assistant.tools.base import Toolbox, ToolInput, tool

RELEASES_MAX = 20
FOUND_MAX = 10


def _releases(box: Toolbox) -> list | None:
    return box.moment.list_releases(RELEASES_MAX)


class ListReleasesInput(ToolInput):
    limit: int = Field(default=5, ge=1, le=RELEASES_MAX, description="how many, newest first")


class TextInput(ToolInput):
    text: str = Field(min_length=1, max_length=2000, description="words, an error, a path")
    limit: int = Field(default=5, ge=1, le=FOUND_MAX, description="how many results")


@tool("list_releases", ListReleasesInput, when=lambda box: _releases(box) is not None)
def list_releases(box: Toolbox, args: ListReleasesInput) -> str:
    """The releases published before the moment, newest first: tag, name, date and the start of
    the notes."""
    releases = (_releases(box) or [])[: args.limit]
    return render("tools/list_releases.txt.j2", releases=releases)


@tool(
    "search_discussions",
    TextInput,
    when=lambda box: box.moment.discussions is not None,
)
def search_discussions(box: Toolbox, args: TextInput) -> str:
    """Search the repository's discussions as they were at the moment (an answer given later is
    not shown). A discussion is never a duplicate, but an answered one may answer a question."""
    found = box.moment.search_discussions(args.text, args.limit, box.issue)
    return render("tools/search_discussions.txt.j2", found=found)


@tool("likely_files", TextInput, when=lambda box: box.moment.code is not None)
def likely_files(box: Toolbox, args: TextInput) -> str:
    """The checkout's files most likely concerned by the text (stack frames and named paths
    first, then words), with a line where a stack frame names one."""
    found = box.moment.likely(args.text, limit=args.limit)
    return render("tools/likely_files.txt.j2", found=found)
