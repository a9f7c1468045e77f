"""What `config check` warns of: what will make the engines answer worse (a description left
empty or a placeholder)."""

from __future__ import annotations

import re

from issue_assistant.config.labels import GROUPS, LabelsConfig
from issue_assistant.config.sections import Config

# A description that is a placeholder still to be written ("TODO: what it means", "TBD").
_PLACEHOLDER = re.compile(r"\s*(?:TODO|TBD|FIXME|XXX)\b", re.IGNORECASE)


def unwritten(text: str) -> bool:
    """Whether a description is empty or still a placeholder (TODO, TBD, FIXME)."""
    return not text.strip() or bool(_PLACEHOLDER.match(text))


def weak_spots(labels: LabelsConfig, config: Config) -> tuple[list[str], list[str]]:
    """What will make the engines answer worse, one line each: in labels.toml, a proposable
    label (or a type) without a description; in config.toml, no project description."""
    in_labels = []
    for group in GROUPS:
        for lab in labels.group(group):  # type: ignore[arg-type]
            if not lab.propose or not unwritten(lab.description):
                continue
            what = "is empty" if not lab.description.strip() else "is still a placeholder"
            if group == "type":
                in_labels.append(
                    f"the type `{lab.name}`'s description {what}: the LLM engines tell the "
                    "types apart by it"
                )
            else:
                in_labels.append(
                    f"the {group} label `{lab.name}`'s description {what}: the LLM engines read "
                    "it to decide when the label fits"
                )
    in_config = []
    if unwritten(config.project.description):
        in_config.append(
            "[project] description is empty or a placeholder: the LLM engines read it to know "
            "what the project is"
        )
    return in_labels, in_config
