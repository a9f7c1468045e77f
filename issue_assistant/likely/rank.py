"""Likely files: the signals of `likely.signals` combined, each file with its reasons and the
precision measured for files like it.

`combine` adds each signal's scores (as a share of its best hint, times the signal's weight);
files named by a stack frame or a path come first. The weights and the precision table come
from `likely_files.toml` beside this module, written by `bench/likely_files.py` from the fixed
issues of a real repository (its header says which): the precision of a file is the share of
files at the same standing (first by a clear margin over the second, first by a small one,
second, ...) that the fix changed, so the comment can show only files above
`[code] min_precision`.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from issue_assistant.errors import UserError
from issue_assistant.likely.checkout import file_kind
from issue_assistant.likely.code import CodeIndex, LikelyFile
from issue_assistant.likely.functions import qualify
from issue_assistant.likely.signals import (
    REASONS,
    SIGNALS,
    Hint,
    errors,
    frames,
    paths,
    word_hints,
)

if TYPE_CHECKING:
    from issue_assistant.config.sections import Config
    from issue_assistant.likely.fix_history import FixHistory

SETTINGS = Path(__file__).with_name("likely_files.toml")
NAMED = ("frame", "path")


@dataclass(frozen=True)
class Weights:
    """How much each signal counts in `combine` (its hints' scores as a share of its best)."""

    frame: float = 3.0
    path: float = 2.0
    error: float = 1.5
    words: float = 1.0
    history: float = 1.0
    prior: float = 0.3
    # a frame or named path is near-certain: it ranks above anything the other signals say
    named_first: bool = True

    def of(self, signal: str) -> float:
        return float(getattr(self, signal))


@dataclass
class Ranked:
    path: str
    score: float = 0.0
    line: int | None = None
    function: str | None = None
    by: dict[str, Hint] = field(default_factory=dict)  # signal -> its hint
    margin: float = 0.0  # its score's lead over the next file's (`combine`)

    def evidence(self) -> str:
        """The strongest kind of reason: a frame, a path, an error message; else history and
        words agreeing, history, words, the prior."""
        for signal in ("frame", "path", "error"):
            if signal in self.by:
                return signal
        if "history" in self.by and "words" in self.by:
            return "history+words"
        return next(s for s in ("history", "words", "prior") if s in self.by)

    def likely(self, confidence: float | None = None, standing: str = "") -> LikelyFile:
        main = min(self.by, key=SIGNALS.index)
        why = tuple(
            f"{REASONS[s]}: {h.detail}" if h.detail else REASONS[s] for s, h in self.by.items()
        )
        return LikelyFile(
            self.path,
            round(self.score, 4),
            self.line,
            REASONS[main],
            why=why,
            function=self.function,
            confidence=confidence,
            standing=standing,
        )


def combine(
    hints: Mapping[str, Iterable[Hint]],
    weights: Weights = Weights(),
    limit: int = 10,
    keep: Iterable[str] | None = None,
) -> list[Ranked]:
    """The files best first by the weighted sum of each signal's scores (a share of its best).

    `keep`: only these paths (a kind filter, say); a signal's best is taken among them.
    """
    allowed = None if keep is None else set(keep)
    by: dict[str, Ranked] = {}
    for signal in SIGNALS:
        w = weights.of(signal)
        listed = [h for h in hints.get(signal, []) if allowed is None or h.path in allowed]
        if not listed or w <= 0:
            continue
        top = max(h.score for h in listed)
        for h in listed:
            r = by.setdefault(h.path, Ranked(h.path))
            if signal in r.by:
                continue
            r.by[signal] = h
            r.score += w * (h.score / top if top > 0 else 1.0)
            if r.line is None and h.line is not None:
                r.line, r.function = h.line, h.function

    def key(r: Ranked) -> tuple[bool, float]:
        certain = weights.named_first and any(s in r.by for s in NAMED)
        return (not certain, -r.score)

    ranked = sorted(by.values(), key=key)
    for i, r in enumerate(ranked):
        after = ranked[i + 1].score if i + 1 < len(ranked) else 0.0
        r.margin = max(r.score - after, 0.0)
    return ranked[:limit]


def all_hints(
    code: CodeIndex,
    title: str,
    body: str,
    *,
    project: str = "",
    history: FixHistory | None = None,
    before: datetime | None = None,
    number: int | None = None,
) -> dict[str, list[Hint]]:
    """Every signal's hints for an issue (history and prior only with a `FixHistory` and the
    moment `before`: only fixes known strictly earlier are seen)."""
    text = f"{title}\n\n{body}"
    out = {
        "frame": frames(code, text),
        "path": paths(code, text),
        "error": errors(code, text),
        "words": word_hints(code, title, body, project=project),
    }
    if history is not None and before is not None:
        out["history"] = history.hints(code, title, body, before, exclude=number)
        out["prior"] = history.prior(code, before)
    return out


STANDINGS = ("first-clear", "first-close", "second", "third-fifth", "sixth-tenth")
# How the comment words a standing.
STANDING_WORDS = {
    "first-clear": "a file ranked first by a clear margin",
    "first-close": "a file ranked first by a small margin",
    "second": "a file ranked second",
    "third-fifth": "a file ranked third to fifth",
    "sixth-tenth": "a file ranked sixth to tenth",
}


def standing(rank: int, margin: float, clear: float) -> str:
    """Where a file stands in the ranking: first (by a clear margin over the second, or not),
    second, third to fifth, sixth to tenth."""
    if rank == 1:
        return "first-clear" if margin >= clear else "first-close"
    return "second" if rank == 2 else "third-fifth" if rank <= 5 else "sixth-tenth"


@dataclass(frozen=True)
class LikelyCalibration:
    """The likely files' weights, the precision measured by standing (`standing`), and what
    measured it (`likely_files.toml`)."""

    weights: Weights = Weights()
    precision: Mapping[str, float] = field(default_factory=dict)  # "first-clear" -> share
    clear_margin: float = 1.0  # a first file's lead over the second that counts as clear
    kinds: tuple[str, ...] = ("source",)  # the kinds of files ranked (tests and docs: not)
    source: str = "not measured"

    def standing(self, rank: int, margin: float) -> str:
        return standing(rank, margin, self.clear_margin)

    def estimate(self, rank: int, margin: float) -> float | None:
        return self.precision.get(self.standing(rank, margin))


@lru_cache(maxsize=4)
def load_calibration(path: Path = SETTINGS) -> LikelyCalibration:
    """`likely_files.toml` (a UserError naming the key when it is malformed)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UserError(
            f"cannot read the likely-files calibration: {exc}", where=str(path)
        ) from None
    known = {f.name for f in fields(Weights)}
    raw = data.get("weights", {})
    bad = sorted(set(raw) - known)
    if bad:
        raise UserError(f"unknown weight {bad[0]!r}", where=f"{path} [weights]")
    precision = data.get("precision", {})
    for key, value in precision.items():
        if key not in STANDINGS:
            raise UserError(f"unknown standing {key!r}", where=f"{path} [precision]")
        if not isinstance(value, int | float) or not 0 <= value <= 1:
            raise UserError(f"{key} must be a number from 0 to 1", where=f"{path} [precision]")
    margin = data.get("clear_margin", 1.0)
    if not isinstance(margin, int | float) or margin < 0:
        raise UserError("clear_margin must be a number of at least 0", where=str(path))
    try:
        weights = Weights(**raw)
    except TypeError as exc:
        raise UserError(str(exc), where=f"{path} [weights]") from None
    return LikelyCalibration(
        weights=weights,
        precision={k: float(v) for k, v in precision.items()},
        clear_margin=float(margin),
        kinds=tuple(data.get("kinds", ["source"])),
        source=str(data.get("source", "")),
    )


def calibration_for(config: Config) -> LikelyCalibration:
    """The calibration `[code] calibration` names (the shipped one when empty)."""
    named = config.code.calibration
    return load_calibration(Path(named) if named else SETTINGS)


def likely_files(
    code: CodeIndex,
    title: str,
    body: str = "",
    *,
    limit: int = 5,
    project: str = "",
    history: FixHistory | None = None,
    before: datetime | None = None,
    number: int | None = None,
    calibration: LikelyCalibration | None = None,
) -> list[LikelyFile]:
    """The files most likely concerned by an issue, best first, each with its reasons and its
    estimated precision (None where the benchmark measured nothing like it)."""
    cal = calibration or load_calibration()
    hints = all_hints(
        code, title, body, project=project, history=history, before=before, number=number
    )
    wanted = set(cal.kinds)
    keep = [p for hs in hints.values() for h in hs if file_kind(p := h.path) in wanted]
    ranked = combine(hints, cal.weights, limit, keep)
    for r in ranked:
        if r.line is not None or r.function is not None:
            r.function = function_at(code, r.path, r.line, r.function)
    return [
        r.likely(cal.estimate(n, r.margin), STANDING_WORDS[cal.standing(n, r.margin)])
        for n, r in enumerate(ranked, start=1)
    ]


def function_at(
    code: CodeIndex, path: str, line: int | None, name: str | None = None
) -> str | None:
    """The qualified function at `line` of `path`, or the one a frame names (`functions.qualify`;
    spans kept by the index until it changes)."""
    return qualify(code.spans_of(path), name, line)
