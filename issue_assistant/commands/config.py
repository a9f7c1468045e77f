"""`config check`: validate labels.toml and config.toml, load the engines they name, and warn of
what will make the engines answer worse."""

from __future__ import annotations

import argparse
import json
import logging

from issue_assistant.commands.args import add_config_arguments, add_json_argument
from issue_assistant.errors import UserError

log = logging.getLogger(__name__)

HELP = (
    "Check labels.toml and config.toml (unknown keys, wrong types, invalid names, duplicate "
    "labels), load the engine and its fallback, as analyze would, and check that the "
    "workflows in .github/workflows name no placeholder action (OWNER/...). Warns of what will "
    "hurt the answers: labels and types without a description, no project description."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["check"], help="what to do")
    add_json_argument(parser, "the label counts, the engine, its strategy and the fallback")
    parser.add_argument(
        "--strict", action="store_true", help="treat the warnings as errors (exit status 2)"
    )
    add_config_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from issue_assistant.commands.common import config_paths, load_configs
    from issue_assistant.config import GROUPS, find_file, weak_spots
    from issue_assistant.engines import available
    from issue_assistant.errors import print_cli
    from issue_assistant.pipeline import engines_for, prepare
    from issue_assistant.published import check_workflows

    labels, config = load_configs(args)
    counts = {g: len(labels.group(g)) for g in GROUPS}  # type: ignore[arg-type]
    engine = config.engine.name
    if engine not in available():
        raise UserError(f"engine {engine!r} is not installed (available: {', '.join(available())})")
    try:
        main, fallback = engines_for(config, labels)
    except UserError:
        raise
    except Exception as exc:  # a plugin that fails to import, say
        names = " or ".join(repr(n) for n in (engine, config.engine.fallback) if n)
        raise UserError(f"engine {names} cannot be loaded: {exc}") from None
    prepare(main, fallback)  # a missing key, binary, login or model file: exit 2
    fallback_name = config.engine.fallback or None
    workflows = check_workflows(Path("."))
    labels_path, config_path = config_paths(args)
    in_labels, in_config = weak_spots(labels, config)
    where_labels = _shown(find_file("labels.toml", labels_path)) or "labels.toml"
    where_config = _shown(find_file("config.toml", config_path)) or "config.toml (none found)"
    warnings = [f"{where_labels}: {w}" for w in in_labels]
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
    print(f"ok: labels ({text}); engine {engine} ({main.strategy}{also}), ready{checked}")
    return 0


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
