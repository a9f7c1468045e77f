"""What will make the engines answer worse: a description left empty or a placeholder (`config
check` warns of it), and a label of labels.toml the repository does not have (the commands that
read the repository warn of it)."""

from __future__ import annotations

import difflib
import logging
import re
from collections.abc import Iterable, Sequence
from typing import Protocol

from issue_assistant.config.labels import GROUPS, LabelsConfig
from issue_assistant.config.sections import Config
from issue_assistant.labelnames import key, missing

log = logging.getLogger(__name__)

# More labels absent (or without a description, in one group) than this: one warning for them.
MANY_ABSENT = 3
# Why a type's or a label's description matters (`it`: "it", or "each" for several).
_WHY_DESCRIBED = {
    "type": "the LLM engines tell the types apart by {it}",
    "label": "the LLM engines read {it} to decide when the label fits",
}
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
        blank = [
            lab
            for lab in labels.group(group)  # type: ignore[arg-type]
            if lab.propose and unwritten(lab.description)
        ]
        why = _WHY_DESCRIBED["type" if group == "type" else "label"]
        if len(blank) > MANY_ABSENT:
            shown = ", ".join(f"`{lab.name}`" for lab in blank[:MANY_ABSENT])
            kind = "types" if group == "type" else f"{group} labels"
            in_labels.append(
                f"{len(blank)} {kind} have no description yet ({shown}, ...): "
                + why.format(it="each")
            )
            continue
        for lab in blank:
            what = "is empty" if not lab.description.strip() else "is still a placeholder"
            named = f"type `{lab.name}`" if group == "type" else f"{group} label `{lab.name}`"
            in_labels.append(f"the {named}'s description {what}: {why.format(it='it')}")
    in_config = []
    if unwritten(config.project.description):
        in_config.append(
            "[project] description is empty or a placeholder: the LLM engines read it to know "
            "what the project is"
        )
    return in_labels, in_config


def absent_labels(labels: LabelsConfig, have: Iterable[str], repository: str) -> list[str]:
    """One line per label of labels.toml's groups that `repository`'s labels (`have`) lack, its
    subject the file (`names ...`: the caller says which file, where it is),
    compared without regard to case as GitHub does, with the nearest name it has (one line in
    all beyond `MANY_ABSENT`: the file is likely another repository's); none when `have` is
    empty (the repository's labels are unknown). The needs-info label is not checked: it may
    be created when first used."""
    names = {key(n): n for n in have}
    absent = missing(
        (lab.name for g in GROUPS for lab in labels.group(g)),  # type: ignore[arg-type]
        names.values(),
    )
    if len(absent) > MANY_ABSENT:
        shown = ", ".join(f"`{n}`" for n in absent[:MANY_ABSENT])
        return [
            f"names {len(absent)} labels {repository} does not have ({shown}, ...): "
            "is it this repository's? Those labels are never learned nor applied"
        ]
    out = []
    for name in absent:
        near = difflib.get_close_matches(key(name), list(names), n=1, cutoff=0.75)
        maybe = f" (did you mean `{names[near[0]]}`?)" if near else ""
        out.append(
            f"names `{name}`, a label {repository} does not have{maybe}: no issue "
            "carries it, so it is never learned, and an approval leaves it out"
        )
    return out


class _Named(Protocol):
    name: str


class Labelled(Protocol):
    """A repository and its labels (`tracker.models.Repository`), as far as the check reads it."""

    full_name: str

    @property
    def labels(self) -> Sequence[_Named]: ...


def warn_absent_labels(labels: LabelsConfig, repository: Labelled) -> None:
    """Log a warning for each label of labels.toml `repository` does not have
    (`absent_labels`)."""
    have = (lab.name for lab in repository.labels)
    for line in absent_labels(labels, have, repository.full_name):
        log.warning("labels.toml %s", line)
