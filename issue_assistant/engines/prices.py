"""Dollar costs from the `genai-prices` package's bundled price data (no network at run time).

`cost()` is None when the model is unknown to it: the report then says the cost is unknown,
instead of counting it as free (a budget must never silently stop biting).
"""

from __future__ import annotations

import logging
from functools import lru_cache

log = logging.getLogger(__name__)


@lru_cache(maxsize=256)
def _known(model: str, provider: str) -> bool:
    return cost(model, provider, 1, 1) is not None


def cost(
    model: str,
    provider: str,
    tokens_in: int,
    tokens_out: int,
    cache_read: int = 0,
    cache_write: int = 0,
) -> float | None:
    """The price of one call in dollars; `tokens_in` excludes cached tokens (Anthropic's way)."""
    from genai_prices import Usage, calc_price

    usage = Usage(
        input_tokens=tokens_in + cache_read + cache_write,
        output_tokens=tokens_out,
        cache_read_tokens=cache_read or None,
        cache_write_tokens=cache_write or None,
    )
    try:
        price = calc_price(usage, model_ref=model, provider_id=provider)
    except LookupError:
        log.warning(
            "no price known for %s model %r: its cost is reported as unknown", provider, model
        )
        return None
    return float(price.total_price)


def known(model: str, provider: str) -> bool:
    """Whether the price data knows `model` (cached)."""
    return _known(model, provider)
