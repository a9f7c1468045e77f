"""What one fit shares with the next: analysed texts, chosen C values and warm starts.

A fit's cross-validation folds, and evaluate's time buckets (the same history a few dozen issues
longer each time), fit the same kind of model on nearly the same issues. A `Fitting` lets them
share the work that does not change the result: each text is cut into terms once (`Caches`), a
C chosen by cross-validation is reused for the same group on a history of about the same size
(or, `pinned`, on any), and each logistic regression starts from the nearest earlier solution
(the objective is convex, so the optimum is the one a cold start reaches, to the solver's
tolerance). One `Fitting` serves one thread at a time (`lock`).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np

from issue_assistant.learn.features import Caches, Features
from issue_assistant.learn.logistic import Fitted

KEEP = 8  # earlier solutions kept per kind of model


@dataclass
class _Solution:
    rows: int
    features: Features | None  # None for the dense head (its columns never change)
    fitted: Fitted


@dataclass
class Fitting:
    caches: Caches = field(default_factory=Caches)
    lock: threading.RLock = field(default_factory=threading.RLock)
    _solutions: dict[tuple, list[_Solution]] = field(default_factory=dict)
    _c: dict[tuple, list[tuple[int, float]]] = field(default_factory=dict)
    # While set, every head reuses the C chosen last for its kind of model, whatever the rows
    # (a fit's calibration folds reuse its final model's C: see `model.fit`).
    pinned: bool = False

    def warm(
        self, key: tuple, rows: int, features: Features | None
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """The stored solution for `key` fit on the nearest number of rows, on these columns."""
        found = self._solutions.get(key)
        if not found:
            return None
        best = min(found, key=lambda s: abs(s.rows - rows))
        coef = best.fitted.coef
        if features is not None and best.features is not None:
            coef = features.carry(best.features, coef)
        return coef, best.fitted.intercept

    def remember(self, key: tuple, rows: int, features: Features | None, fitted: Fitted) -> None:
        found = self._solutions.setdefault(key, [])
        found.append(_Solution(rows, features, fitted))
        if len(found) > KEEP:
            found.pop(0)

    def chosen_c(self, key: tuple, rows: int, tolerance: float) -> float | None:
        """A C chosen before for `key` on a history within `tolerance` (a share) of `rows`."""
        if self.pinned:  # any C chosen for this group's kind of model (a fold's labels may differ)
            same = [v for k, v in self._c.items() if k[0] == key[0] and k[-1] == key[-1] and v]
            if same:
                return same[-1][-1][1]
        for n, c in self._c.get(key, []):
            if abs(n - rows) <= tolerance * max(n, 1):
                return c
        return None

    def remember_c(self, key: tuple, rows: int, c: float) -> None:
        self._c.setdefault(key, []).append((rows, c))
