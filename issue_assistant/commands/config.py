"""`config check`: validate labels.toml and config.toml, and load the engines they name."""

from __future__ import annotations

import argparse

from issue_assistant.commands.common import add_config_arguments, load_configs
from issue_assistant.config import GROUPS
from issue_assistant.errors import UserError

HELP = (
    "Check labels.toml and config.toml (unknown keys, wrong types, invalid names, duplicate "
    "labels) and load the engine and its fallback, as analyze would."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["check"], help="what to do")
    add_config_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from issue_assistant.pipeline import engines_for

    labels, config = load_configs(args)
    counts = ", ".join(f"{len(labels.group(g))} {g}" for g in GROUPS)  # type: ignore[arg-type]
    names = [n for n in (config.engine.name, config.engine.fallback) if n]
    try:
        engines_for(config, labels)
    except UserError:
        raise
    except Exception as exc:  # a plugin that fails to import, say
        raise UserError(f"engine {' or '.join(map(repr, names))} cannot be loaded: {exc}") from None
    fallback = f" (fallback {config.engine.fallback})" if config.engine.fallback else ""
    print(f"ok: labels ({counts}); engine {config.engine.name}{fallback}")
    return 0
