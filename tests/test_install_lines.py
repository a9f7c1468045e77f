"""Every `pip install` the README and docs/ show installs this project (from the checkout, or from
its repository by URL under its own distribution name: `issue-assistant` on the package index is
another project), with extras that exist; and the one lookup order of labels.toml and config.toml
is what `--help`, action.yml and the docs say."""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

import pytest
import yaml

from issue_assistant import names

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
EXTRAS = set(PROJECT["optional-dependencies"])
# `pip install` up to the end of its inline code span, shell operator, comment or line.
LINE = re.compile(r"pip install ([^`\n]*?)\s*(?=`|&&|\|\||;|#|$)", re.M)
FROM_URL = re.compile(
    rf"^(?P<name>[\w.-]+)(?:\[(?P<extras>[\w,]+)\])? @ git\+{re.escape(names.SOURCE)}(?:@[\w.-]+)?$"
)
FROM_CHECKOUT = re.compile(r"^\.(?:\[(?P<extras>[\w,]+)\])?$")


def install_lines() -> list[tuple[str, str]]:
    return [
        (f"{page.name}:{page.read_text(encoding='utf-8').count(chr(10), 0, m.start()) + 1}", m[1])
        for page in PAGES
        for m in LINE.finditer(page.read_text(encoding="utf-8"))
    ]


def problem(arguments: str) -> str | None:
    """Why `pip install ARGUMENTS` does not install this project, or None."""
    words = [w for w in shlex.split(arguments) if not w.startswith("-")]
    if not words:
        return "installs nothing"
    for word in words:
        url, checkout = FROM_URL.match(word), FROM_CHECKOUT.match(word)
        if url is None and checkout is None:
            return f"{word!r} is neither the checkout nor {names.DISTRIBUTION} from its repository"
        if url is not None and url["name"] != names.DISTRIBUTION:
            return f"{url['name']!r} is not the distribution's name ({names.DISTRIBUTION})"
        extras = set(((url or checkout)["extras"] or "").split(",")) - {""}
        if extras - EXTRAS:
            return f"no extra {sorted(extras - EXTRAS)} in pyproject.toml"
    return None


def test_the_distribution_name_is_the_one_in_pyproject():
    assert PROJECT["name"] == names.DISTRIBUTION != "issue-assistant"
    assert PROJECT["urls"]["Repository"] == names.SOURCE
    assert PROJECT["scripts"] == {"issue-assistant": "issue_assistant.cli:main"}
    assert all(names.DISTRIBUTION in d for d in PROJECT["optional-dependencies"]["dev"] if "[" in d)


def test_the_docs_show_install_lines():
    found = [text for _, text in install_lines()]
    assert any(FROM_URL.match(shlex.split(t)[-1]) for t in found), "one install from the URL"
    assert any(t.startswith("-e .") for t in found)


@pytest.mark.parametrize(("where", "arguments"), install_lines())
def test_every_install_line_installs_this_project(where, arguments):
    assert problem(arguments) is None, f"{where}: pip install {arguments}: {problem(arguments)}"


@pytest.mark.parametrize(
    "arguments",
    [
        "'issue-assistant[mcp]'",  # the other project on the package index
        "issue-assistant-action",  # not published: nothing to install by name alone
        "-e '.[nosuch]'",
        f'"issue-assistant[mcp] @ git+{names.SOURCE}"',
        f'"{names.DISTRIBUTION}[mcp] @ git+https://github.com/someone/else"',
        "",
    ],
)
def test_a_wrong_install_line_is_caught(arguments):
    assert problem(arguments) is not None


@pytest.mark.parametrize("extra", ["local", "mcp", "completion"])
def test_the_code_tells_the_install_line_of_an_extra(extra):
    assert problem(names.install_line(extra).removeprefix("pip install ")) is None


def test_the_lookup_order_is_said_the_same_in_help_action_and_docs():
    from issue_assistant.cli import build_parser

    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))["inputs"]
    docs = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    sub = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    for name in ("labels", "config"):
        order = names.lookup_order(f"{name}.toml")
        assert f"- {name}.toml: {order}\n" in docs
        assert names.lookup(f"{name}.toml") in action[name]["description"]
        check = sub["config"]._subparsers._group_actions[0].choices["check"]  # type: ignore[union-attr]
        for command in (sub["analyze"], sub["evaluate"], sub["backlog"], sub["mcp"], check):
            helps = {a.dest: a.help for a in command._actions}
            assert helps[name] == f"{name}.toml: {order}", command.prog
