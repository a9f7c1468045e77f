"""Where labels.toml and config.toml are looked for, in labeler's and release-drafter's order, and
loading both."""

from __future__ import annotations

import logging
import tomllib
from pathlib import Path

from issue_assistant import names
from issue_assistant.config.labels import LabelsConfig, load_labels
from issue_assistant.config.sections import MOVED, Config, load_config
from issue_assistant.errors import UserError

log = logging.getLogger(__name__)


#: where the two files are looked for, in this order, as labeler and release-drafter read
#: `.github/`; a file at the repository root comes last, and only when it is ours.
SEARCH_DIRS = tuple(Path(d) for d in names.SEARCH_DIRS)


def _own_keys(name: str) -> set[str]:
    if name == "labels.toml":
        return set(LabelsConfig.model_fields)
    return set(Config.model_fields) | set(MOVED)


def is_ours(path: Path, name: str) -> bool:
    """Whether the file at `path` is an issue-assistant `name`: it is empty, or one of its
    top-level keys is one of ours (a Hugo `config.toml` has `baseURL`, `[params]`, none of
    them). A file that cannot be parsed counts as ours, so its error is reported."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return True
    return not data or bool(set(data) & _own_keys(name))


def find_file(name: str, explicit: str | None, root: Path | None = None) -> Path | None:
    """An explicit path (which must exist), else `name` under `.github/issue-assistant/`, then
    `.github/`, then at the root when it is ours (`is_ours`)."""
    if explicit:
        p = Path(explicit)
        if p.is_dir():
            raise UserError("a folder, not a file", where=str(p))
        if not p.is_file():
            raise UserError("file not found", where=str(p))
        return p
    root = root or Path.cwd()
    for folder in SEARCH_DIRS:
        candidate = root / folder / name
        if candidate.is_file():
            return candidate
    candidate = root / name
    if candidate.is_file():
        if is_ours(candidate, name):
            return candidate
        log.info("%s: not read, it is another tool's (none of issue-assistant's keys)", candidate)
    return None


def load_both(
    labels: str | None, config: str | None, root: Path | None = None
) -> tuple[LabelsConfig, Config]:
    labels_path = find_file("labels.toml", labels, root)
    if labels_path is None:
        other = (root or Path.cwd()) / "labels.toml"
        note = (
            f" ({other} is another tool's: it has none of issue-assistant's keys)"
            if other.is_file()
            else ""
        )
        raise UserError(
            "no labels.toml in .github/issue-assistant/, .github/ or the repository root"
            f"{note} (use --labels, or draft one from the repository's labels with "
            "`issue-assistant init`)"
        )
    return load_labels(labels_path), load_config(find_file("config.toml", config, root))
