"""What GitHub would make of a text we post: parsed with markdown-it as GitHub's renderer would.

`problems(text, repository)` lists every mention (but the allowed ones), link or image outside the
repository, raw HTML (but the template's own), cross-repository reference, e-mail address, bare
URL GitHub would link, and invisible character. The rules here are written apart from the
sanitizer's (a plain prefix test on the URLs it emits), so the tests check it rather than repeat it.
"""

from __future__ import annotations

import re
import unicodedata

from markdown_it import MarkdownIt
from markdown_it.token import Token

# HTML our own templates write.
TEMPLATE_HTML = re.compile(
    r"^(?:<!-- issue-assistant -->"
    r"|<!-- issue-assistant:plan \{.*\} -->|<details><summary>[^<>]*</summary>|</details>"
    r"|<sub>|</sub>)$",
    re.DOTALL,
)
MENTION = re.compile(r"@[A-Za-z0-9]")  # a mention (GitHub's \W before it is ASCII) or an e-mail
BARE_URL = re.compile(r"(?i)(?:\b[a-z][a-z0-9+.-]*://|\bwww\.|\b(?:mailto|xmpp):[^\s@]*@[a-z0-9])")
REPO_REF = re.compile(r"([\w.-]+/[\w.-]+)#\d")


def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": True, "linkify": True})
    md.enable(["table", "strikethrough", "linkify"])
    md.validateLink = lambda url: True  # every link is a link here, even javascript:
    return md


MD = _parser()


def _inline(tokens: list[Token]) -> list[Token]:
    out: list[Token] = []
    for t in tokens:
        out.append(t)
        if t.children:
            out.extend(_inline(t.children))
    return out


def problems(text: str, repository: str, allowed_mentions: tuple[str, ...] = ()) -> list[str]:
    own = f"https://github.com/{repository}".lower()
    found: list[str] = []

    def check_url(url: str, what: str) -> None:
        low = url.lower()
        if low.startswith("#"):
            return
        inside = low == own or low.startswith(own + "/")
        if not inside or ".." in low or "%2e" in low or "\\" in url or "@" in url:
            found.append(f"{what} outside the repository: {url}")

    for ch in set(text):
        if ch not in "\n\u200b" and unicodedata.category(ch) in ("Cc", "Cf", "Cs"):
            found.append(f"invisible character U+{ord(ch):04X}")
    in_link = 0
    in_autolink = False  # `<URL>`: its text is its URL, checked as the link; GitHub makes no
    # reference of the text inside a link
    for t in _inline(MD.parse(text)):
        if t.type == "link_close":
            in_link -= 1
            in_autolink = False
        if t.type in ("html_block", "html_inline"):
            if not TEMPLATE_HTML.match(t.content.strip()):
                found.append(f"raw HTML: {t.content[:80]!r}")
        elif t.type == "link_open":
            in_link += 1
            in_autolink = t.markup == "autolink"
            if (
                t.markup != "linkify"
            ):  # linkify's are judged as text: GitHub links what BARE_URL finds
                check_url(str(t.attrGet("href")), "link")
        elif t.type == "image":
            check_url(str(t.attrGet("src")), "image")
        elif t.type == "text":
            content = t.content
            for name in allowed_mentions:
                content = re.sub(rf"(?<![\w@]){re.escape(name)}(?![\w-])", "", content)
            if m := MENTION.search(content):
                found.append(
                    f"mention or e-mail: {content[max(0, m.start() - 20) : m.end() + 20]!r}"
                )
            if (m := BARE_URL.search(content)) and not in_link:
                found.append(f"bare URL: {content[m.start() : m.end() + 30]!r}")
            for m in [] if in_autolink else REPO_REF.finditer(content):
                if m.group(1).lower() != repository.lower():
                    found.append(f"reference to another repository: {m.group(0)!r}")
    return found
