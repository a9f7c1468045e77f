"""One jinja2 environment for every text we render (templates under `issue_assistant/templates`)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from functools import cache
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined


def safe_text(text: str | None, repository: str, limit: int = 2000, *, table: bool = False) -> str:
    """Untrusted text made safe for one line of a comment on `repository` (`sanitize.sanitize`).

    No mention, no raw HTML, no link or image outside `https://github.com/OWNER/REPO/`; at most
    `limit` characters; `table`: for a table cell.
    """
    from issue_assistant.sanitize import sanitize

    return sanitize(text, repository, limit, table=table)


def neutralize(text: str | None, limit: int = 2000, *, table: bool = False) -> str:
    """Untrusted text made safe where no repository is known: no link is kept at all."""
    from issue_assistant.sanitize import sanitize

    return sanitize(text, "", limit, table=table)


def code(value: object, limit: int = 200, *, table: bool = False) -> str:
    """A value (a label name, an engine, a login) as one code span, whatever it holds."""
    from issue_assistant.sanitize import clean, code_span

    text = clean(str(value))
    return code_span(text if len(text) <= limit else text[: limit - 1] + "…", table=table)


def path(value: object, limit: int = 300, *, table: bool = False, link: bool = False) -> str:
    """A path from a checkout as one code span: no character in it ends the span or a line
    (`link`: the text of a link)."""
    from issue_assistant.sanitize import path_span

    return path_span(str(value), limit, table=table, link=link)


def visible(value: object) -> str:
    """A name from a checkout as text, each control character shown as an escape."""
    from issue_assistant.sanitize import visible as shown

    return shown(str(value))


def fence(text: str | None) -> str:
    """Wrap untrusted text in a code fence longer than any backtick run inside it."""
    text = text or ""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}text\n{text.rstrip()}\n{ticks}"


def quoted(text: str | None) -> str:
    """Untrusted text (release notes, a discussion) as data: in a code fence, each line after
    `> `, so no line of it can read as a heading or start an instruction block, rendered or
    raw."""
    lines = (text or "").rstrip().splitlines() or [""]
    return fence("\n".join(f"> {line}" for line in lines))


def excerpt(text: str | None, limit: int = 300) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def one_line(text: str | None, limit: int = 200) -> str:
    return excerpt(text, limit)


def runs(rows: Sequence[Any], *fields: str) -> list[tuple[float, float, Any]]:
    """Consecutive rows of a table by threshold that agree on `fields`, as one: (its first
    threshold, its last, the first row). Thresholds where nothing changes read as one line."""
    out: list[tuple[float, float, Any, tuple]] = []
    for row in rows:
        key = tuple(getattr(row, f) for f in fields)
        if out and out[-1][3] == key:
            out[-1] = (out[-1][0], row.threshold, out[-1][2], key)
        else:
            out.append((row.threshold, row.threshold, row, key))
    return [(low, high, row) for low, high, row, _ in out]


@cache
def environment() -> Environment:
    env = Environment(
        loader=PackageLoader("issue_assistant", "templates"),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
        # package data: never changes while a process runs, so no file is checked per render
        auto_reload=False,
    )
    env.filters["neutralize"] = neutralize
    env.filters["safe_text"] = safe_text
    env.filters["fence"] = fence
    env.filters["quoted"] = quoted
    env.filters["excerpt"] = excerpt
    env.filters["one_line"] = one_line
    env.filters["code"] = code
    env.filters["path"] = path
    env.filters["visible"] = visible
    env.filters["runs"] = runs
    env.filters["tojson_compact"] = lambda v: json.dumps(v, ensure_ascii=False, sort_keys=True)
    env.globals["date"] = lambda d: d.strftime("%Y-%m-%d") if d else ""
    return env


def render(template: str, **values: Any) -> str:
    return environment().get_template(template).render(**values)
