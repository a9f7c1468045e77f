"""`config check`: validate labels.toml and config.toml, load the engines they name, and warn of
what will make the engines answer worse."""

from __future__ import annotations

import argparse
import json
import logging
from typing import TYPE_CHECKING

from issue_assistant.commands.args import (
    QUIET,
    VERBOSE,
    add_config_arguments,
    add_json_argument,
    add_repository_argument,
)
from issue_assistant.errors import UserError

if TYPE_CHECKING:
    from issue_assistant.config.labels import LabelsConfig

log = logging.getLogger(__name__)

HELP = "Work with labels.toml and config.toml: `config check` validates them."
CHECK = (
    "Check labels.toml and config.toml (unknown keys, wrong types, invalid names, duplicate "
    "labels), load the engine and its fallback, as analyze would, and check that the "
    "workflows in .github/workflows name no placeholder action (OWNER/...); -v names the "
    "files read. Warns of what will hurt the answers: labels and types without a "
    "description, no project description, and with --snapshot FILE or -R OWNER/REPO, "
    "labels the repository does not have."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="SUBCOMMAND", title="subcommands")
    check = sub.add_parser("check", help=CHECK, description=CHECK)
    check.add_argument("-v", "--verbose", action="count", default=argparse.SUPPRESS, help=VERBOSE)
    check.add_argument("-q", "--quiet", action="store_true", default=argparse.SUPPRESS, help=QUIET)
    add_json_argument(check, "the label counts, the engine, its strategy and the fallback")
    check.add_argument(
        "--strict", action="store_true", help="treat the warnings as errors (exit status 2)"
    )
    add_config_arguments(check)
    check.add_argument(
        "--snapshot",
        metavar="FILE",
        help="check the labels against this snapshot's repository (offline)",
    )
    add_repository_argument(
        check,
        positional=False,
        help="check the labels against this repository on GitHub (one read; needs a token "
        "for a private one)",
    )
    parser.set_defaults(_help=parser.format_help)


def _say_files(args: argparse.Namespace) -> None:
    """With -v: which files were read (or, for config.toml, that none was found)."""
    from issue_assistant.commands.common import config_paths
    from issue_assistant.config.files import find_file
    from issue_assistant.names import lookup

    said = logging.getLogger("issue_assistant.config")
    for name, given in zip(("labels.toml", "config.toml"), config_paths(args), strict=True):
        found = find_file(name, given)
        if found is not None:
            said.info("%s: read %s", name, found)
        else:
            said.info("%s: none found (looked in %s)", name, lookup(name))


def _load_both(args: argparse.Namespace):  # noqa: ANN202
    """Both files; when labels.toml is wrong, config.toml is checked too, so one run says what
    is wrong in each (the first file's error printed, the second's raised)."""
    from issue_assistant.commands.common import load_config_only, load_configs
    from issue_assistant.errors import print_cli

    try:
        return load_configs(args)
    except UserError as first:
        try:
            load_config_only(args)
        except UserError as second:
            if str(second) != str(first):
                print_cli(first)
                raise second from None
        raise


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    if args.action is None:  # a group: what it holds, as `gh issue` does
        print(args._help(), end="")
        return 0

    from issue_assistant.commands.args import check_sources
    from issue_assistant.commands.common import config_paths
    from issue_assistant.config.files import find_file
    from issue_assistant.config.labels import GROUPS
    from issue_assistant.config.weak_spots import weak_spots
    from issue_assistant.engine_registry import is_known
    from issue_assistant.engines import available
    from issue_assistant.errors import print_cli
    from issue_assistant.pipeline import check_engines, engines_for
    from issue_assistant.published import check_workflows

    check_sources(args)
    labels, config = _load_both(args)
    _say_files(args)
    counts = {g: len(labels.group(g)) for g in GROUPS}  # type: ignore[arg-type]
    engine = config.engine.name
    if not is_known(engine):
        raise UserError(f"engine {engine!r} is not installed (available: {', '.join(available())})")
    try:
        main, fallback = engines_for(config, labels)
    except UserError:
        raise
    except Exception as exc:  # a plugin that fails to import, say
        names = " or ".join(repr(n) for n in (engine, config.engine.fallback) if n)
        raise UserError(f"engine {names} cannot be loaded: {exc}") from None
    check_engines(main, fallback)  # a missing key, binary, login or model file: exit 2
    fallback_name = config.engine.fallback or None
    workflows = check_workflows(Path("."))
    labels_path, config_path = config_paths(args)
    in_labels, in_config = weak_spots(labels, config)
    where_labels = _shown(find_file("labels.toml", labels_path)) or "labels.toml"
    where_config = _shown(find_file("config.toml", config_path)) or "config.toml (none found)"
    warnings = [f"{where_labels}: {w}" for w in in_labels]
    against, absent = _absent(args, labels)
    warnings += [f"{where_labels}: {w}" for w in absent]
    warnings += [f"{where_config}: {w}" for w in in_config]
    failed = bool(args.strict and warnings)
    for warning in warnings:
        if failed:
            print_cli(UserError(warning))
        else:
            log.warning("%s", warning)
    if args.json:
        print(
            json.dumps(
                {
                    "ok": not failed,
                    "labels": counts,
                    "engine": engine,
                    "strategy": main.strategy,
                    "fallback": fallback_name,
                    "workflows": [str(p) for p in workflows],
                    "repository": against,
                    "warnings": warnings,
                }
            )
        )
        return 2 if failed else 0
    if failed:
        return 2
    text = ", ".join(f"{n} {g}" for g, n in counts.items())
    also = f", fallback {fallback_name}" if fallback_name else ""
    checked = f"; {len(workflows)} workflow(s) checked" if workflows else ""
    if against and not absent:
        text += f", each a label of {against}"
    print(f"ok: labels ({text}); engine {engine} ({main.strategy}{also}), ready{checked}")
    return 0


def _absent(args: argparse.Namespace, labels: LabelsConfig) -> tuple[str | None, list[str]]:
    """The repository of `--snapshot` or `-R` and a line per label of labels.toml it lacks
    (None and none without either)."""
    from issue_assistant.config.weak_spots import absent_labels

    if args.snapshot:
        from issue_assistant.tracker.snapshot import read_repository

        repository = read_repository(args.snapshot)
    elif args.repo:
        from issue_assistant.commands.common import github_reader

        repository = github_reader(args.repo).repository
    else:
        return None, []
    have = [label.name for label in repository.labels]
    log.info("labels.toml checked against the %d labels of %s", len(have), repository.full_name)
    if not have:
        return repository.full_name, [
            f"{repository.full_name} has no labels: none of labels.toml's can be learned from "
            "its issues, and an approval creates the ones it applies"
        ]
    return repository.full_name, absent_labels(labels, have, repository.full_name)


def _shown(path: object) -> str:
    """A path as the warnings show it: relative to the current folder when it is inside it."""
    from pathlib import Path

    if path is None:
        return ""
    p = Path(str(path))
    try:
        return str(p.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(p)
