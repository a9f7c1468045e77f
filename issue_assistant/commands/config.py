"""`config check`: validate labels.toml and config.toml."""

from __future__ import annotations

import argparse

from issue_assistant.commands.common import add_config_arguments, load_configs
from issue_assistant.config import GROUPS
from issue_assistant.engines import available
from issue_assistant.pipeline import engines_for, prepare

HELP = "Check labels.toml and config.toml (unknown keys, wrong types, duplicate labels)."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["check"], help="what to do")
    add_config_arguments(parser)


def run(args: argparse.Namespace) -> int:
    labels, config = load_configs(args)
    counts = ", ".join(f"{len(labels.group(g))} {g}" for g in GROUPS)  # type: ignore[arg-type]
    engine = config.engine.name
    if engine not in available():
        print(f"warning: engine {engine!r} is not installed (available: {', '.join(available())})")
        print(f"ok: labels ({counts}); engine {engine}")
        return 0
    main, fallback = engines_for(config, labels)
    prepare(main, fallback)  # a missing key, binary, login or model file: exit 2
    print(f"ok: labels ({counts}); engine {engine} ({main.strategy}), ready")
    return 0
