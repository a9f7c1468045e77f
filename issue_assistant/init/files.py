"""`init`'s labels.toml and config.toml, built as TOML documents and written by tomlkit.

Every value (a label's name and description, the project description) goes through tomlkit,
which escapes it; every comment that shows outside text (a repository name, a left-out label)
is made one printable line first (`comment_text`), so nothing in a label can add a key.
"""

from __future__ import annotations

from typing import Any

import tomlkit
from tomlkit.items import Table

from issue_assistant.forms import DraftedField
from issue_assistant.init.draft import GROUP_ORDER, Drafted, LabelDraft

EXPLAIN = {
    "type": "exactly one per issue",
    "area": "where in the project (at most max_areas)",
    "topic": "what it is about (at most max_topics)",
    "priority": "at most one",
}
# A command shown as run, at a line's start (spaces and tabs only before it, so a run of blank
# lines is not read again from each one).
PROMPT = r"^[ \t]*(\S*\$|PS .*>|>>>) \S"
# What a bug report must contain; asked when it is missing (the bug type's starter list).
BUG_ASK = [
    {
        "what": "the version",
        "question": "Which version are you using?",
        # with `requires`, any version-like number counts too: "Poetry 2.1", "v1.2.3", "1.8.5"
        "detect": [r"version\s*[:=]?\s*v?\d+\.\d+", r"\bv?\d+\.\d+(\.\d+)*\b"],
        "requires": "version",
    },
    {
        "what": "steps to reproduce",
        "question": "What are the steps (or a minimal example) to reproduce it?",
        # a "repro", or a command shown as run: a shell prompt (`$ `, `user@host:~$ `,
        # PowerShell's `PS C:\\dir> `) or Python's `>>> ` at a line's start
        "detect": ["```", "steps to reproduce", "to reproduce", "reproduc", r"\brepro\b", PROMPT],
    },
    {
        "what": "what happened",
        "question": "What happened instead: the error message, traceback or output?",
        "detect": ["Traceback", "error", "exception", "instead", "expected"],
    },
]


def bug_asks(fields: dict[str, DraftedField]) -> list[dict[str, Any]]:
    """The bug type's starter questions, each with the issue form's field that answers it (and
    the form's prefilled text there) when one was found. A field's answer is read alone, so a
    code block elsewhere in the form no longer counts as steps to reproduce."""
    out = []
    for ask in BUG_ASK:
        found = fields.get(ask["what"])
        if found is None:
            out.append(dict(ask))
            continue
        entry = dict(ask, detect=[p for p in ask["detect"] if p != "```"], field=found.label)
        if found.prefilled:
            entry["prefilled"] = list(found.prefilled)
        out.append(entry)
    return out


def comment_text(text: str) -> str:
    """`text` as one line a TOML comment can hold: every character that is not printable (a
    newline, a control or format character, a lone surrogate) shown as `\\uXXXX`."""
    return "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in text)


def shown(value: str) -> str:
    """A value as TOML writes it (for a commented-out line), kept on one line."""
    return comment_text(tomlkit.string(value).as_string())


def _comment(doc: Any, text: str) -> None:
    doc.add(tomlkit.comment(comment_text(text)))


def _label_table(
    group: str, lb: Drafted, bug: str | None, fields: dict[str, DraftedField]
) -> Table:
    table = tomlkit.table()
    table.comment(f"used on {lb.uses}")
    table.add("name", lb.name)
    description = tomlkit.item(lb.description)
    if not lb.description:
        description.comment("TODO: what it means, for a newcomer")
    table.add("description", description)
    if not lb.propose:
        propose = tomlkit.item(False)
        propose.comment(comment_text(lb.reason))
        table.add("propose", propose)
    if group == "type" and lb.name == bug:
        asks = tomlkit.aot()
        for ask in bug_asks(fields):
            asks.append(tomlkit.item(ask))
        table.add("ask", asks)
    return table


def labels_toml(
    draft: LabelDraft, repository: str, fields: dict[str, DraftedField] | None = None
) -> str:
    """The drafted labels.toml: usable labels as tables; the ones that are not, commented out
    with the reason (odd names are drafted, never a reason to refuse the draft)."""
    doc = tomlkit.document()
    _comment(doc, f"labels.toml for {repository}, drafted by `issue-assistant init`.")
    _comment(doc, "Check the groups, then write each description for a newcomer: the engine")
    _comment(doc, f'reads it. "used on N" counts the {draft.issues_counted} issues read.')
    _comment(doc, "Every key is described in issue-assistant's docs/configuration.md.")
    doc.add(tomlkit.nl())
    if draft.needs_info:
        _comment(doc, "Added when a maintainer approves questions for the reporter.")
        doc.add("needs_info", draft.needs_info)
    else:
        _comment(doc, "The label added when a maintainer approves questions for the reporter")
        _comment(doc, '(none was recognised): needs_info = "needs info"')
    for group in GROUP_ORDER:
        items = draft.groups.get(group, [])
        if not items:
            continue
        tables = tomlkit.aot()
        for lb in items:
            tables.append(_label_table(group, lb, draft.bug, fields or {}))
        doc.add(tomlkit.nl())
        _comment(doc, f"---- {group}: {EXPLAIN[group]} ----")
        doc.add(group, tables)
    if draft.ungrouped:
        doc.add(tomlkit.nl())
        _comment(doc, "---- Not grouped: no naming scheme says what these are. Uncomment the")
        _comment(doc, "---- ones to propose, as [[area]] (where) or [[topic]] (what it is about).")
        for lb in draft.ungrouped:
            doc.add(tomlkit.nl())
            _comment(doc, f"[[area]]  # used on {lb.uses}")
            _comment(doc, f"name = {shown(lb.name)}")
            _comment(doc, f"description = {shown(lb.description)}")
    if draft.unusable:
        doc.add(tomlkit.nl())
        _comment(doc, "---- Not usable as they are named (rename them on GitHub to use them):")
        for lb in draft.unusable:
            _comment(doc, f"  {shown(lb.name)} (used on {lb.uses}): {lb.reason}")
    if draft.left_out:
        doc.add(tomlkit.nl())
        _comment(doc, "Left out (workflow, resolution or the assistant's own labels):")
        for lb in draft.left_out:
            _comment(doc, f"  {shown(lb.name)} (used on {lb.uses}): {lb.reason}")
    return tomlkit.dumps(doc)


def config_toml(
    repository: str, description: str, origin: str, backlog: tuple[list[str], int] | None = None
) -> str:
    """The drafted config.toml (every key optional); `backlog`: the groups the open issues
    read lack, and how many open issues were read."""
    doc = tomlkit.document()
    _comment(doc, f"config.toml for {repository}, drafted by `issue-assistant init`.")
    _comment(doc, "Every key is optional; all are described in issue-assistant's")
    _comment(doc, "docs/configuration.md.")
    doc.add(tomlkit.nl())
    engine = tomlkit.table()
    name = tomlkit.item("similar")
    name.comment("similar (offline, free, learns from your labelled issues), anthropic, llama")
    engine.add("name", name)
    fallback = tomlkit.item("similar")
    fallback.comment('used when the engine fails; "" for none')
    engine.add("fallback", fallback)
    doc.add("engine", engine)
    project = tomlkit.table()
    where = f"from {origin}; check it" if origin else "none found: write two or three sentences"
    project.add(tomlkit.comment(comment_text(f"What the project is, for the engine: {where}.")))
    project.add("description", description)
    doc.add("project", project)
    approval = tomlkit.table()
    approval.add(tomlkit.comment('Start with "dry-run": the job summary shows what would be'))
    approval.add(tomlkit.comment('written and nothing is posted. Remove this line (or set "live")'))
    approval.add(tomlkit.comment("when the proposals look right."))
    approval.add("writes", "dry-run")
    doc.add("approval", approval)
    if backlog is not None and backlog[0]:
        groups, opened = backlog
        table = tomlkit.table()
        table.add(tomlkit.comment("`backlog` proposes for the open issues lacking a label of"))
        table.add(tomlkit.comment(f"these groups: the ones the {opened} open issues read lack."))
        table.add("groups", groups)
        doc.add("backlog", table)
    return tomlkit.dumps(doc)
