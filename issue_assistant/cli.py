"""Command-line parsing only: each subcommand lives in `issue_assistant.commands.<name>`.

A command module holds `HELP`, `add_arguments(parser)` and `run(args)`. Its top level imports only
argparse and light helpers (`commands.args`): building the parser imports every command module,
so anything heavy (pydantic, PyGithub, tantivy, jinja2, rich, an engine's SDK) is imported inside
`run`, for the chosen command only. `tests/test_cli_startup.py` checks this.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import import_module

from issue_assistant import __version__
from issue_assistant.commands.args import QUIET, VERBOSE, check_sources
from issue_assistant.errors import AssistantError, UserError, print_cli

COMMANDS = [
    "init",
    "analyze",
    "apply",
    "backlog",
    "evaluate",
    "calibrate",
    "snapshot",
    "index",
    "search",
    "config",
    "mcp",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="issue-assistant",
        description="Propose labels, a possible duplicate and questions for new GitHub issues; "
        "nothing is written until a maintainer approves.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help=VERBOSE)
    parser.add_argument("-q", "--quiet", action="store_true", help=QUIET)
    # `-v` after the subcommand too (`issue-assistant evaluate -v`); SUPPRESS keeps the count
    # given before it when it is not repeated after.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-v", "--verbose", action="count", default=argparse.SUPPRESS, help=VERBOSE)
    common.add_argument("-q", "--quiet", action="store_true", default=argparse.SUPPRESS, help=QUIET)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        module = import_module(f"issue_assistant.commands.{name}")
        p = sub.add_parser(name, help=module.HELP, description=module.HELP, parents=[common])
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
    return parser


def add_completion(parser: argparse.ArgumentParser) -> None:
    """`--print-completion bash|zsh|tcsh`: a shell completion script, from the optional `shtab`
    (`names.install_line("completion")`); imported only when asked for."""
    try:
        import shtab
    except ImportError:
        from issue_assistant.names import install_line

        parser.error(f"--print-completion needs shtab: {install_line('completion')}")
    shtab.add_argument_to(parser, ["--print-completion"])


class _Quiet(logging.Formatter):
    """Without -v only warnings and errors are shown, each as one `issue-assistant:` line."""

    def format(self, record: logging.LogRecord) -> str:
        return f"issue-assistant: {record.levelname.lower()}: {record.getMessage()}"


@contextmanager
def logging_for(verbose: int) -> Iterator[None]:
    """Quiet on success: warnings and errors only; `-v` adds what is being done (INFO, with
    the logger's name), `-vv` the detail (DEBUG). Undone when the command ends."""
    handler = logging.StreamHandler(sys.stderr)
    if verbose:
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    else:
        handler.setFormatter(_Quiet())
    level = {0: logging.WARNING, 1: logging.INFO}.get(verbose, logging.DEBUG)
    handler.setLevel(level)  # also where a library or a caller set a logger's own level lower
    root = logging.getLogger()
    before = root.level
    root.addHandler(handler)
    root.setLevel(level)
    try:
        yield
    finally:
        root.removeHandler(handler)
        root.setLevel(before)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    if "--print-completion" in (sys.argv[1:] if argv is None else argv):
        add_completion(parser)
    args = parser.parse_args(argv)
    if args.command is None:  # bare `issue-assistant`: the help, as `gh` does
        parser.print_help()
        return 0
    from issue_assistant.progress import quiet

    with logging_for(args.verbose), quiet(args.quiet):
        return _main(args)


def _main(args: argparse.Namespace) -> int:
    try:
        from issue_assistant.settings import Settings, pin_native_threads, using

        pin_native_threads()
        settings = Settings.from_env()
        with using(settings):
            if settings.search_socket and args.command != "search":
                # Started by a command-line engine (engines/command.py): its shell may run us,
                # and only the search is read-only.
                raise UserError(
                    f"inside an engine's run only `issue-assistant search` may run, "
                    f"not `{args.command}`"
                )
            check_sources(args)
            return int(args._run(args) or 0)
    except AssistantError as exc:
        return print_cli(exc)
    except KeyboardInterrupt:
        print("issue-assistant: interrupted", file=sys.stderr)
        return 130
