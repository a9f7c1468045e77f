"""Label names compared as GitHub compares them: without regard to case."""

from __future__ import annotations

from collections.abc import Iterable


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
