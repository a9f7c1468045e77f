"""`mcp`: serve the read-only tools over stdio with the MCP Python SDK (no tool writes).

The tools are those of `issue_assistant.tools`, on a snapshot or on GitHub read once into memory
(`--repo`, as `evaluate` reads it; an issue's comments and events are fetched when it is read;
releases and discussions as the Action reads them), optionally as of a moment, and the checkout
given by `--checkout` for the file tools and `likely_files`. Each tool is served where its data
is known (no release list: no `list_releases`); none writes.
"""

from __future__ import annotations

import argparse
import logging
from typing import TYPE_CHECKING

from issue_assistant import __version__
from issue_assistant.commands.args import add_config_arguments
from issue_assistant.errors import NO_SOURCE, UserError

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

    from issue_assistant.config.labels import LabelsConfig
    from issue_assistant.tools import Toolbox
    from issue_assistant.tracker.base import Tracker
    from issue_assistant.tracker.github_tracker import GitHubTracker
    from issue_assistant.tracker.models import Discussion, Issue, Release, Repository

HELP = (
    "Serve the read-only tools (issues as of a moment, labels, releases, discussions, the "
    "checkout's files and likely files) to MCP clients over stdio; nothing is ever written."
)

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from issue_assistant.commands.args import moment

    parser.add_argument("--snapshot", metavar="FILE", help="a snapshot file to serve, offline")
    parser.add_argument(
        "-R", "--repo", metavar="OWNER/REPO", help="read the repository on GitHub (GITHUB_TOKEN)"
    )
    parser.add_argument("--as-of", type=moment, metavar="T", help="only what existed before T")
    parser.add_argument(
        "--checkout",
        metavar="DIR",
        help="the repository's files for read_file, grep, list_files and likely_files",
    )
    parser.add_argument("--cache-dir", metavar="DIR", help="where the index is kept")
    add_config_arguments(parser)


class LiveIssues:
    """GitHub's issues read once (as `evaluate` does); a read issue's history is fetched once;
    releases and discussions from the live tracker (read once, discussions kept on disk)."""

    def __init__(self, gh: GitHubTracker, listed: Tracker, *, every_release: bool = False) -> None:
        self._gh = gh
        self._listed = listed
        self._full: dict[int, Issue] = {}
        # as of an earlier moment the newest page of releases is not enough: read them all
        self._every_release = every_release
        self._releases: list[Release] | None = None
        self._releases_read = False

    @property
    def repository(self) -> Repository:
        return self._listed.repository

    def all_issues(self) -> Iterable[Issue]:
        return self._listed.all_issues()

    def get_issue(self, number: int) -> Issue:
        issue = self._listed.get_issue(number)
        if issue.events is None and number not in self._full:
            events, comments = self._gh.history(number)
            self._full[number] = issue.model_copy(update={"events": events, "comments": comments})
        return self._full.get(number, issue)

    def releases(self) -> list[Release] | None:
        if not self._every_release:
            return self._gh.releases()
        if not self._releases_read:
            from issue_assistant.errors import GitHubError
            from issue_assistant.tracker.github_context import list_releases

            self._releases_read = True
            try:
                self._releases = list_releases(self._gh)
            except GitHubError as exc:
                log.warning("releases unknown: %s", exc)
        return self._releases

    def discussions(self) -> list[Discussion] | None:
        return self._gh.discussions()

    @property
    def point_in_time(self) -> None:
        return None


def _tracker(
    args: argparse.Namespace, labels: LabelsConfig, bot_login: str, cache: Path
) -> Tracker:
    from issue_assistant.tracker.snapshot import read_snapshot

    if args.snapshot:
        return read_snapshot(args.snapshot)
    from issue_assistant.evaluate.live import read_live
    from issue_assistant.index.local import index_path
    from issue_assistant.settings import current
    from issue_assistant.sync import DISCUSSIONS_FILE
    from issue_assistant.tracker.github_tracker import GitHubTracker

    settings = current()
    gh = GitHubTracker(args.repo, settings.require_token(), settings.api_url)
    gh.keep_discussions(index_path(cache, args.repo) / DISCUSSIONS_FILE)
    listed, _ = read_live(gh, labels, bot_login, 0, with_context=False)  # LiveIssues reads them
    return LiveIssues(gh, listed, every_release=args.as_of is not None)


def toolbox(args: argparse.Namespace) -> Toolbox:
    """The tools on the source the arguments name (everything loaded before serving)."""
    from pathlib import Path

    from issue_assistant.commands.common import cache_dir
    from issue_assistant.config.files import find_file
    from issue_assistant.config.labels import LabelsConfig, load_labels
    from issue_assistant.config.sections import load_config
    from issue_assistant.index.local import open_index
    from issue_assistant.learn.learned import Beside
    from issue_assistant.likely.code import LazyCodeIndex
    from issue_assistant.moment import Moment
    from issue_assistant.tools import Checkout, Toolbox
    from issue_assistant.tracker.asof import AsOfView

    if not args.snapshot and not args.repo:
        raise UserError(NO_SOURCE)
    checkout = Checkout(args.checkout) if args.checkout else None  # fail before any reading
    labels_path = find_file("labels.toml", args.labels)
    labels = load_labels(labels_path) if labels_path else LabelsConfig()
    config = load_config(find_file("config.toml", args.config))
    cache = Path(cache_dir(args, config))
    tracker = _tracker(args, labels, config.approval.bot_login, cache)
    index = open_index(tracker, cache)
    code = None
    if checkout is not None:
        limits = {"max_file_kb": config.code.max_file_kb, "max_files": config.code.max_files}
        code = LazyCodeIndex(args.checkout, **limits)  # read on first use, not before serving
    view = AsOfView(tracker, args.as_of) if args.as_of is not None else tracker
    moment = Moment.build(view, index, labels, Beside(), as_of=args.as_of, code=code)  # type: ignore[arg-type]
    return Toolbox(moment, checkout=checkout)


def server(box: Toolbox):  # noqa: ANN201
    """An MCP server (low-level SDK) whose tools are exactly the toolbox's read-only tools."""
    import mcp_types as types
    from mcp.server.lowlevel import Server

    readonly = types.ToolAnnotations(
        read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
    )

    async def list_tools(ctx, params) -> types.ListToolsResult:  # noqa: ANN001
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=t.name,
                    description=t.description,
                    input_schema=t.schema(),
                    annotations=readonly,
                )
                for t in box.tools()
            ]
        )

    async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:  # noqa: ANN001
        result = box.call(params.name, params.arguments)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=result.text)], is_error=result.is_error
        )

    return Server(
        "issue-assistant",
        version=__version__,
        instructions=f"Read-only tools over {box.moment.repository}"
        + (f" as of {box.moment.as_of.isoformat()}" if box.moment.as_of else "")
        + f": {', '.join(box.names())}.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def run(args: argparse.Namespace) -> int:
    try:
        import anyio
        from mcp.server.stdio import stdio_server
    except ImportError:
        from issue_assistant.names import install_line

        raise UserError(f"the mcp command needs the MCP SDK: {install_line('mcp')}") from None
    box = toolbox(args)
    log.info("mcp: serving %s on stdio", ", ".join(box.names()))
    srv = server(box)

    async def serve() -> None:
        async with stdio_server() as (read, write):
            await srv.run(read, write, srv.create_initialization_options())

    anyio.run(serve)
    return 0
