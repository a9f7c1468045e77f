"""`config check`: validate labels.toml and config.toml."""

from __future__ import annotations

import argparse
import json

from issue_assistant.commands.args import add_config_arguments, add_json_argument

HELP = "Check labels.toml and config.toml (unknown keys, wrong types, duplicate labels)."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["check"], help="what to do")
    add_json_argument(parser, "the counts, the engine and the warnings")
    add_config_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from issue_assistant.commands.common import load_configs
    from issue_assistant.config import GROUPS
    from issue_assistant.engines import available

    labels, config = load_configs(args)
    counts = {g: len(labels.group(g)) for g in GROUPS}  # type: ignore[arg-type]
    engine = config.engine.name
    warnings = []
    if engine not in available():
        warnings.append(f"engine {engine!r} is not installed (available: {', '.join(available())})")
    if args.json:
        print(json.dumps({"ok": True, "labels": counts, "engine": engine, "warnings": warnings}))
        return 0
    for warning in warnings:
        print(f"warning: {warning}")
    text = ", ".join(f"{n} {g}" for g, n in counts.items())
    print(f"ok: labels ({text}); engine {engine}")
    return 0
