"""One jinja2 environment for every text we render (templates under `issue_assistant/templates`)."""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined

_MENTION = re.compile(r"(?<![\w`])@(?=[A-Za-z0-9])")
_HTML = re.compile(r"<(?=[A-Za-z!/?])")


def neutralize(text: str | None) -> str:
    """Untrusted text made inert for a GitHub comment: no @mentions, no raw HTML."""
    text = text or ""
    text = _MENTION.sub("@\u200b", text)
    return _HTML.sub("&lt;", text)


def fence(text: str | None) -> str:
    """Wrap untrusted text in a code fence longer than any backtick run inside it."""
    text = text or ""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}text\n{text.rstrip()}\n{ticks}"


def excerpt(text: str | None, limit: int = 300) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def one_line(text: str | None, limit: int = 200) -> str:
    return excerpt(text, limit)


@cache
def environment() -> Environment:
    env = Environment(
        loader=PackageLoader("issue_assistant", "templates"),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    env.filters["neutralize"] = neutralize
    env.filters["fence"] = fence
    env.filters["excerpt"] = excerpt
    env.filters["one_line"] = one_line
    env.filters["code"] = lambda v: f"`{v}`"
    env.filters["tojson_compact"] = lambda v: json.dumps(v, ensure_ascii=False, sort_keys=True)
    env.globals["date"] = lambda d: d.strftime("%Y-%m-%d") if d else ""
    return env


def render(template: str, **values: Any) -> str:
    return environment().get_template(template).render(**values)
