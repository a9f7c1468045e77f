"""Label names compared as GitHub compares them: without regard to case."""

from __future__ import annotations

import re
from collections.abc import Iterable

# Characters that can end a line or a code span, or reorder what is shown, in a name (a label's,
# a checkout file's): C0/C1 controls, line and paragraph separators, bidi controls.
CONTROL_CHARS = re.compile("[\\x00-\\x1f\\x7f-\\x9f\\u2028\\u2029\\u202a-\\u202e\\u2066-\\u2069]")


def has_control(name: str) -> bool:
    """Whether `name` (a file name, a label name) holds a control character."""
    return CONTROL_CHARS.search(name) is not None


def key(name: str) -> str:
    """The form two label names share when GitHub treats them as one label."""
    return name.casefold()


def has_label(labels: Iterable[str], name: str) -> bool:
    """Whether `name` is among `labels`, in any casing."""
    wanted = key(name)
    return any(key(n) == wanted for n in labels)


def find_label(labels: Iterable[str], name: str) -> str | None:
    """The spelling of `name` used in `labels`, or None."""
    wanted = key(name)
    return next((n for n in labels if key(n) == wanted), None)


def keys(labels: Iterable[str]) -> set[str]:
    return {key(n) for n in labels}


def missing(names: Iterable[str], have: Iterable[str]) -> list[str]:
    """Those of `names` not among `have` in any casing; none when `have` is empty (a
    repository whose labels are not known)."""
    known = keys(have)
    return [n for n in names if known and key(n) not in known]
