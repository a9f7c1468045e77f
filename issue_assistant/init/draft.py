"""`init`'s drafting: group a repository's labels by common naming schemes into a `labels.toml`,
and draft `config.toml` and the workflow file. Pure functions over the labels and issues."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from issue_assistant.tracker.models import Issue, LabelInfo

GROUP_ORDER = ("type", "area", "topic", "priority")
# Prefixes before `/`, `:` or `-` (with optional spaces): which group they name.
PREFIXES = {
    "kind": "type",
    "type": "type",
    "issue-type": "type",
    "c": "type",  # Rust's C-bug, C-feature-request
    "area": "area",
    "a": "area",  # Rust's A-*
    "component": "area",
    "comp": "area",
    "module": "area",
    "pkg": "area",
    "package": "area",
    "scope": "area",
    "subsystem": "area",
    "category": "area",  # opencv's category: core (a type word after it names a type)
    "platform": "topic",
    "os": "topic",
    "topic": "topic",
    "theme": "topic",
    "tag": "topic",
    "priority": "priority",
    "prio": "priority",
    "p": "priority",
    "severity": "priority",
}
# Workflow labels: state, not classification; left out.
WORKFLOW_PREFIXES = {
    "status", "state", "needs", "need", "triage", "stale", "resolution", "workflow", "lifecycle",
    "pr", "ci", "review", "backport", "impact", "version", "release", "milestone", "s", "i", "t",
    "stat",
    "awaiting", "waiting", "assistant",
}  # fmt: skip
WORKFLOW_NAMES = re.compile(
    r"^(triage|needs?[ -_]?triage|stale|wip|work in progress|blocked|on hold|pinned|"
    r"awaiting[ -_].*|waiting[ -_].*|needs?[ -_].*|in progress|ready|released|fixed|"
    r"confirmed|unconfirmed|reproduced|cannot reproduce|can't reproduce|"
    r"duplicate|wontfix|won't fix|wont fix|invalid|not planned|not a bug|by design|"
    r"as[ -]designed|out[ -]of[ -]scope|not[ -]reproducible|caused[ -]by[ -]extension|"
    r"off[ -]topic|works as intended|spam|hacktoberfest-accepted|dependencies|autorelease.*)$"
)
# Good for people, never for the assistant to propose.
NEVER_PROPOSED = re.compile(
    r"^(good first issue|good second issue|first-timers-only|beginner friendly|easy|"
    r"help wanted|hacktoberfest|up for grabs|contributions welcome|mentored|e-easy|e-help-wanted)$"
)
NEEDS_INFO = re.compile(
    r"(needs?|awaiting|waiting)[ _:/-]*((for|on|from)[ _-]+)?(more[ _-]*)?(info|information|"
    r"feedback|repro|reproduction|response|author|reporter)"
    r"|(info|information|repro|reproduction)[ _-]*(needed|required|requested)"
    r"|question: unanswered"
)
TYPE_WORDS = {
    "bug", "enhancement", "feature", "question", "documentation", "docs", "request",
    "proposal", "rfc", "discussion", "regression", "task", "chore", "support", "idea",
}  # fmt: skip
PRIORITY_NAMES = re.compile(
    r"^(p[0-4]|critical|urgent|blocker|high priority|low priority|medium priority|"
    r"priority|important)$"
)
_SPLIT = re.compile(r"^\s*([A-Za-z][\w-]*?)\s*(?:[/:]\s*|-(?=\S))(.+)$")


@dataclass
class Drafted:
    """One label of the draft: where it goes and why."""

    name: str
    description: str
    group: str | None  # None: not grouped (shown commented out)
    propose: bool = True
    uses: int = 0
    reason: str = ""


@dataclass
class LabelDraft:
    groups: dict[str, list[Drafted]] = field(default_factory=dict)
    ungrouped: list[Drafted] = field(default_factory=list)
    left_out: list[Drafted] = field(default_factory=list)
    # Labels labels.toml cannot name as they are (a comma, control characters, ...): drafted
    # as comments with the reason, never a reason to refuse the draft.
    unusable: list[Drafted] = field(default_factory=list)
    needs_info: str | None = None
    bug: str | None = None
    issues_counted: int = 0

    def counts(self) -> dict[str, int]:
        return {g: len(self.groups.get(g, [])) for g in GROUP_ORDER}


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def _singular(word: str) -> str:
    """`bugs` -> `bug`, `questions` -> `question` (not `class` or `status`)."""
    return word[:-1] if word.endswith("s") and not word.endswith(("ss", "us")) else word


def _type_word(text: str) -> bool:
    """Whether `text` has a type word (`bug`, `Questions`, ...)."""
    return bool({w for word in _words(text) for w in (word, _singular(word))} & TYPE_WORDS)


def classify(name: str) -> tuple[str | None, bool, str]:
    """(group or None, propose, reason) for one label name; group "-" means left out. A
    leading `*` (vscode's `*duplicate`, `*as-designed`) is read past."""
    low = name.strip().lower().lstrip("*").strip()
    if NEVER_PROPOSED.match(low):
        return "topic", False, "for contributors, never proposed"
    if PRIORITY_NAMES.match(low):
        return "priority", True, "a priority name"
    if low in ("assistant: pending", "assistant: skip") or WORKFLOW_NAMES.match(low):
        return "-", False, "a workflow or resolution label"
    match = _SPLIT.match(low)
    if match:
        prefix, rest = match.group(1), match.group(2)
        if prefix in WORKFLOW_PREFIXES:
            return "-", False, f"a workflow label ({prefix}*)"
        if prefix in PREFIXES and (len(prefix) > 1 or low[len(prefix)] == "-"):
            group = PREFIXES[prefix]
            if group == "type" and NEVER_PROPOSED.match(rest):
                return "topic", False, "for contributors, never proposed"
            if group == "type" and WORKFLOW_NAMES.match(rest):  # `Type: Needs Investigation`
                return "-", False, "a workflow or resolution label"
            if prefix == "category" and _type_word(rest):
                group = "type"
            return group, True, f"the {prefix}* scheme"
    if _type_word(low):
        return "type", True, "a type word"
    return None, True, "no known scheme"


def usage(issues: Iterable[Issue]) -> tuple[Counter[str], int]:
    """How many issues (not pull requests) carry each label, and how many issues were counted."""
    counts: Counter[str] = Counter()
    n = 0
    for issue in issues:
        if issue.is_pull_request:
            continue
        n += 1
        counts.update(set(issue.labels))
    return counts, n


def unusable(name: str) -> str | None:
    """Why labels.toml cannot name this label as it is, or None."""
    from pydantic import ValidationError

    from issue_assistant.config.labels import Label

    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return "the name is not valid Unicode"
    try:
        Label(name=name)
    except ValidationError as exc:
        return str(exc.errors()[0]["msg"]).removeprefix("Value error, ")
    return None


def _text(value: str | None) -> str:
    """Text UTF-8 can hold (a lone surrogate becomes U+FFFD)."""
    return (value or "").encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def draft_labels(labels: list[LabelInfo], counts: Counter[str], issues_counted: int) -> LabelDraft:
    """Group the labels; when the repository lists none, the labels seen on issues are used.

    The needs-info label is one not put in a group (labels.toml keeps the two apart)."""
    known = {lb.name: lb for lb in labels}
    for name in counts:
        known.setdefault(name, LabelInfo(name=name))
    draft = LabelDraft(issues_counted=issues_counted)
    for name in sorted(known, key=lambda n: (-counts[n], n.lower())):
        info = known[name]
        group, propose, reason = classify(name)
        description = _text(info.description).strip()
        item = Drafted(name, description, group, propose, counts[name], reason)
        problem = unusable(name)
        if problem is not None:
            item.reason = problem
            draft.unusable.append(item)
            continue
        if draft.needs_info is None and group in (None, "-") and NEEDS_INFO.search(name.lower()):
            draft.needs_info = name
        if group == "-":
            draft.left_out.append(item)
        elif group is None:
            draft.ungrouped.append(item)
        else:
            draft.groups.setdefault(group, []).append(item)
    types = draft.groups.get("type", [])
    bugs = [t for t in types if "bug" in _words(t.name)]
    exact = [t for t in bugs if _words(t.name)[-1:] == ["bug"] and len(_words(t.name)) <= 2]
    draft.bug = (exact or bugs or [None])[0] and (exact or bugs)[0].name
    return draft


def first_paragraph(markdown: str, limit: int = 600) -> str:
    """The README's first paragraph of prose (skipping headings, badges, HTML and code)."""
    fenced = False
    para: list[str] = []
    for raw in markdown.splitlines():
        line = raw.strip()
        if line.startswith(("```", "~~~")):
            fenced = not fenced
            continue
        skip = (
            fenced
            or line.startswith(("#", "<", "[![", "![", "|", ">", "---", "==="))
            or re.fullmatch(r"(\[!\[.*|\s*)", line) is not None
        )
        if skip or not line:
            if para:
                break
            continue
        para.append(line)
    text = " ".join(para)
    text = re.sub(r"!\[[^\]]*\]\([^)]*\)", "", text)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text).strip()
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"


def workflow_text(action: str) -> str:
    """The example workflow (docs/workflow.yml), using the action `action` (OWNER/NAME@vN), and
    naming the action from source (OWNER/NAME/source@main) for before the first release."""
    from issue_assistant.render import render

    source = action.split("@", 1)[0] + "/source@main"
    return render("init/workflow.yml.j2", action=action, source=source)
