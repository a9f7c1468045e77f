"""URL normalisation: is a link target inside the repository, and its one canonical form.

A link in a comment on `https://github.com/OWNER/REPO/issues/N` is kept only when it still points
into `https://github.com/OWNER/REPO` once it is normalised the way a browser would read it:
backslashes as slashes, scheme and host in lower case, percent-encoding decoded, `.` and `..`
resolved, scheme-relative (`//host/...`) and relative targets resolved against the issue's page.
Forms a browser reads differently from a plain parser (`http:host`, `https:/host`, user info,
other ports) are never inside. What is kept is rebuilt from the decoded parts, so the URL we emit
means exactly what was checked.
"""

from __future__ import annotations

import re
from urllib.parse import quote, unquote

HOSTS = ("github.com", "www.github.com")
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")
# After decoding, a path, query or fragment holding these is refused outright.
_BAD = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_DECODE_ROUNDS = 3
# Characters left unencoded in what we emit: none that Markdown reads inside a link destination
# (parentheses, `<>`, a backslash, `;` that would end an entity) nor `@`.
_SAFE_PATH = "-._~!$'*+,=:"
_SAFE_QUERY = _SAFE_PATH + "/?&"


def _decode(text: str) -> str | None:
    """Percent-decoding applied until nothing changes (None when it keeps changing)."""
    for _ in range(_DECODE_ROUNDS):
        decoded = unquote(text)
        if decoded == text:
            return text
        text = decoded
    return None


def _remove_dots(path: str) -> list[str]:
    """The path's segments with `.` and `..` resolved (RFC 3986 5.2.4; `..` stops at the root)."""
    out: list[str] = []
    parts = path.split("/")[1:]
    for i, seg in enumerate(parts):
        last = i == len(parts) - 1
        if seg == ".":
            if last:
                out.append("")
        elif seg == "..":
            if out:
                out.pop()
            if last:
                out.append("")
        else:
            out.append(seg)
    return out


def _split_authority(rest: str) -> tuple[str, str]:
    end = len(rest)
    for ch in "/?#":
        pos = rest.find(ch)
        if pos != -1:
            end = min(end, pos)
    return rest[:end], rest[end:]


def _host_ok(authority: str) -> bool:
    if "@" in authority:
        return False  # user info: `https://github.com@evil.example/` goes to evil.example
    host, _, port = authority.partition(":")
    host = _decode(host)
    if host is None or not host.isascii():
        return False
    return host.lower().rstrip(".") in HOSTS and port in ("", "443")


def canonical_url(url: str, repository: str, issue: int | None = None) -> str | None:
    """`url` as `https://github.com/OWNER/REPO/...` when it points into `repository`, else None.

    Relative targets are resolved against the page of issue `issue` (or the issue list).
    """
    owner, _, name = repository.partition("/")
    if not owner or not name:
        return None
    url = url.strip().replace("\\", "/")
    page = f"/{owner}/{name}/issues/" + (str(issue) if issue else "")
    if m := _SCHEME.match(url):
        if m.group(1).lower() not in ("http", "https"):
            return None
        rest = url[m.end() :]
        if not rest.startswith("//") or rest.startswith("///"):
            return None  # `http:host`, `https:/host`, `https:///host`: read as a host by browsers
        authority, target = _split_authority(rest[2:])
        if not _host_ok(authority):
            return None
    elif url.startswith("//"):
        if url.startswith("///"):
            return None
        authority, target = _split_authority(url[2:])
        if not _host_ok(authority):
            return None
    elif url.startswith("/"):
        target = url
    elif url.startswith("#"):
        fragment = _decode(url[1:])
        if fragment is None or _BAD.search(fragment):
            return None
        return "#" + quote(fragment, safe=_SAFE_QUERY)
    elif url.startswith("?") or not url:
        target = page + url
    else:
        target = page.rsplit("/", 1)[0] + "/" + url
    target, _, fragment = target.partition("#")
    path, _, query = target.partition("?")
    decoded = [_decode(part) for part in (path or "/", query, fragment)]
    if any(part is None or _BAD.search(part) for part in decoded):
        return None
    path, query, fragment = decoded  # type: ignore[misc]
    segments = _remove_dots("/" + path.lstrip("/"))
    if len(segments) < 2 or segments[0].lower() != owner.lower():
        return None
    if segments[1].lower() != name.lower():
        return None
    out = "https://github.com/" + "/".join(quote(s, safe=_SAFE_PATH) for s in segments)
    if query:
        out += "?" + quote(query, safe=_SAFE_QUERY)
    if fragment:
        out += "#" + quote(fragment, safe=_SAFE_QUERY)
    return out
