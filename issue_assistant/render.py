"""One jinja2 environment for every text we render (templates under `issue_assistant/templates`)."""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined

_MENTION = re.compile(r"(?<![\w`])@(?=[A-Za-z0-9])")
_HTML = re.compile(r"<(?=[A-Za-z!/?])")
# Markdown links and images: [text](target "title"), ![alt](target)
_MD_LINK = re.compile(r"(!?)\[([^\]\n]*)\]\(\s*<?([^)\s>]*)>?[^)\n]*\)")
# Bare URLs GitHub turns into links: scheme://..., www...., and protocol-relative //host/...
_URL = re.compile(
    r"(?:[a-z][a-z0-9+.-]*://|www\.|(?<![\w:/])//(?=[\w-]+\.))[^\s<>)\]]+", re.IGNORECASE
)


def neutralize(text: str | None) -> str:
    """Untrusted text made inert for a GitHub comment: no @mentions, no raw HTML."""
    text = text or ""
    text = _MENTION.sub("@\u200b", text)
    return _HTML.sub("&lt;", text)


def safe_text(text: str | None, repository: str) -> str:
    """Untrusted text made safe: no @mentions, no raw HTML, no links outside the repository.

    A link into `https://github.com/OWNER/REPO/` (or to `#N`) stays; any other link, Markdown link
    or image becomes plain text.
    """
    own = f"https://github.com/{repository}/".lower()

    def is_own(url: str) -> bool:
        return url.lower().startswith(own) or re.fullmatch(r"#\d+", url) is not None

    def md_link(match: re.Match[str]) -> str:
        image, label, target = match.groups()
        if not image and is_own(target):
            return match.group(0)
        return f"{label} (link removed)" if label.strip() else "(link removed)"

    def bare(match: re.Match[str]) -> str:
        return match.group(0) if is_own(match.group(0)) else "(link removed)"

    text = _MD_LINK.sub(md_link, text or "")
    text = _URL.sub(bare, text)
    return neutralize(text)


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
