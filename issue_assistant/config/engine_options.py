"""The `similar` engine's options, `[engines.similar]`: a light module (pydantic only), so that
checking config.toml needs no import of the engine (which pulls in numpy and the learner)."""

from __future__ import annotations

from pydantic import Field

from issue_assistant.config.strict import Strict


class SimilarConfig(Strict):
    """`[engines.similar]` (formerly `[similar]`): the `similar` engine's options."""

    neighbors: int = Field(default=15, ge=1)
    min_confidence: float = Field(default=0.4, ge=0, le=1)
