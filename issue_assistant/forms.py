"""GitHub issue forms: the answers in an issue's body as fields, and the forms of a checkout.

A body written by an issue form is a run of `### Label` sections, one per field, each followed by
the answer: `_No response_` for a field left empty, the chosen option(s) of a dropdown, and
`- [x] item` lines for checkboxes. With the form itself (`.github/ISSUE_TEMPLATE/*.yml`) a field
is known by its id and type too, and an answer left at the form's prefilled value counts as empty.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

NO_RESPONSE = "_No response_"
FORMS_DIR = Path(".github/ISSUE_TEMPLATE")
FIELD_TYPES = ("input", "textarea", "dropdown", "checkboxes")
_HEADING = re.compile(r"^### (.+?)\s*$")
# A Markdown template's heading: `##` to `######` (opencv's template is written in `#####`), or a
# line in bold alone (`**Describe the bug**`). `#` is left out: pasted code starts lines with it.
_TEMPLATE_HEADING = re.compile(r"^\s{0,3}(?:#{2,6}\s+(.+?)[\s#]*|\*\*([^*]+?)\*\*:?)\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_CHECKBOX = re.compile(r"^\s*[-*] \[([ xX])\] (.+?)\s*$")
# What fills a field without saying anything: HTML comments (one left open hides the rest, as
# GitHub shows it), <details>/<summary> wrappers, fence lines (with their language) and
# whitespace. Each part is read once, whatever the text (it is the reporter's): a comment left
# open ends the text, the wrappers' lengths are bounded, no line is read again from the lines
# before it.
_NOISE = re.compile(
    r"<!--.*?(?:-->|\Z)|</?details[^>]{0,200}>|<summary[^>]{0,200}>.{0,2000}?</summary>"
    r"|^[^\S\n]*(```|~~~)[\w .+-]*$",
    re.DOTALL | re.MULTILINE | re.IGNORECASE,
)


@dataclass(frozen=True)
class FormField:
    """One field of an issue form: its label (the body's `### Label`), id, type, the options of a
    dropdown or checkboxes, and the text the form prefills (an answer left so is empty)."""

    label: str
    kind: str
    id: str = ""
    options: tuple[str, ...] = ()
    prefilled: str = ""


@dataclass(frozen=True)
class IssueForm:
    """An issue form of the checkout: its name, the labels it adds and its fields."""

    name: str
    path: str
    labels: tuple[str, ...]
    fields: tuple[FormField, ...]

    def field(self, label: str) -> FormField | None:
        key = _key(label)
        return next((f for f in self.fields if _key(f.label) == key or f.id == label), None)


@dataclass(frozen=True)
class Answer:
    """The answer to one field: its text ("" when left empty), the ticked checkbox items, and the
    field's type when the form is known ("" otherwise)."""

    label: str
    text: str
    checked: tuple[str, ...] = ()
    kind: str = ""

    @property
    def empty(self) -> bool:
        return not self.text and not self.checked

    @property
    def said(self) -> str:
        return self.text or "\n".join(self.checked)

    @property
    def choice(self) -> bool:
        """A dropdown's answer: the form says so, or (without the form) one short line."""
        if self.kind:
            return self.kind == "dropdown"
        return bool(self.text) and "\n" not in self.text and len(self.text) <= 60


@dataclass(frozen=True)
class Answers:
    """The fields of one issue body, in order (empty when the body is not a form's)."""

    fields: dict[str, Answer] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.fields)

    def get(self, label: str) -> Answer | None:
        return self.fields.get(_key(label))

    def given(self) -> list[Answer]:
        return [a for a in self.fields.values() if not a.empty]

    def text(self, skip: frozenset[str] = frozenset()) -> str:
        """What the reporter answered: each answered field's label and answer (a field left
        empty, or answered with a text of `skip` (normalized), says nothing)."""
        return "\n\n".join(
            f"{a.label}\n{a.said}" for a in self.given() if normal(a.said) not in skip
        )


def _key(label: str) -> str:
    return " ".join(label.casefold().split())


def _sections(
    body: str, heading: re.Pattern[str] = _HEADING, lead: bool = False
) -> list[tuple[str, list[str]]] | None:
    """The sections under `heading` lines outside code fences; None when there is none, or
    (unless `lead`) when the body does not start with one."""
    sections: list[tuple[str, list[str]]] = []
    fenced = False
    for line in body.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
        found = None if fenced else heading.match(line)
        if found:
            sections.append((next(g for g in found.groups() if g), []))
        elif sections:
            sections[-1][1].append(line)
        elif line.strip() and not lead:
            return None
    return sections or None


def normal(text: str) -> str:
    """`text` without what says nothing (comments, wrappers, fence lines), spaces made one."""
    return " ".join(_NOISE.sub(" ", text).split())


def parse(body: str | None, form: IssueForm | None = None) -> Answers:
    """The form answers in `body` (empty `Answers` when it is not a form's body)."""
    return _answers(_sections(body or ""), form)


def parse_template(body: str | None) -> Answers:
    """The sections of a body written from a Markdown template or an issue form, as answers:
    under `##` to `######` headings and lines in bold alone, text before the first ignored (empty
    `Answers` when the body has no such heading)."""
    return _answers(_sections(body or "", _TEMPLATE_HEADING, lead=True), None)


def _answers(sections: list[tuple[str, list[str]]] | None, form: IssueForm | None) -> Answers:
    if sections is None:
        return Answers()
    out: dict[str, Answer] = {}
    for label, lines in sections:
        spec = form.field(label) if form else None
        raw = "\n".join(lines).strip()
        checked = tuple(
            m.group(2) for ln in lines if (m := _CHECKBOX.match(ln)) and m.group(1) != " "
        )
        filled = [ln for ln in lines if ln.strip()]
        boxes = (
            (spec.kind == "checkboxes")
            if spec
            else bool(filled) and all(_CHECKBOX.match(ln) for ln in filled)
        )
        text = "" if raw == NO_RESPONSE or boxes else raw
        said = normal(text)
        if not said or (spec and spec.prefilled and said == normal(spec.prefilled)):
            text = ""
        kind = spec.kind if spec else ("checkboxes" if boxes else "")
        out[_key(label)] = Answer(label, text, checked, kind)
    return Answers(out)


def form_of(body: str | None, forms: list[IssueForm]) -> IssueForm | None:
    """The form whose fields are most of the body's sections (None when none is)."""
    sections = _sections(body or "") or []
    labels = {_key(label) for label, _ in sections}
    best, score = None, 0.0
    for form in forms:
        ours = {_key(f.label) for f in form.fields}
        share = len(labels & ours) / max(len(labels), 1)
        if share > score:
            best, score = form, share
    return best if score >= 0.5 else None


def read_form(path: Path) -> IssueForm | None:
    """An issue form file; None for a Markdown template or a file that is not a form."""
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("body"), list):
        return None
    labels = data.get("labels") or []
    if isinstance(labels, str):
        labels = [p.strip() for p in labels.split(",")]
    fields = []
    for item in data["body"]:
        if not isinstance(item, dict) or item.get("type") not in FIELD_TYPES:
            continue
        attrs = item.get("attributes") or {}
        if not isinstance(attrs, dict) or not isinstance(attrs.get("label"), str):
            continue
        options = attrs.get("options") or []
        names = tuple(
            str(o.get("label", "")) if isinstance(o, dict) else str(o)
            for o in options
            if isinstance(options, list)
        )
        prefilled = attrs.get("value") if isinstance(attrs.get("value"), str) else ""
        fields.append(
            FormField(attrs["label"], item["type"], str(item.get("id") or ""), names, prefilled)
        )
    name = data.get("name") if isinstance(data.get("name"), str) else path.stem
    return IssueForm(name, path.name, tuple(str(x) for x in labels if x), tuple(fields))


def read_forms(checkout: Path | None) -> list[IssueForm]:
    """The issue forms in `checkout`'s `.github/ISSUE_TEMPLATE/` (none without a checkout);
    read once per folder and process."""
    if checkout is None:
        return []
    return list(_read_forms(Path(checkout).resolve()))


@cache
def _read_forms(checkout: Path) -> tuple[IssueForm, ...]:
    folder = checkout / FORMS_DIR
    if not folder.is_dir():
        return ()
    paths = sorted([*folder.glob("*.yml"), *folder.glob("*.yaml")])
    return tuple(form for p in paths if p.name != "config.yml" and (form := read_form(p)))


# Which form field answers which of the bug type's starter questions (by the field's label).
_ROLES = {
    "the version": re.compile(r"\bversion\b", re.I),
    "steps to reproduce": re.compile(r"reproduc|\bsteps\b|example|minimal|sample", re.I),
    "what happened": re.compile(r"\blogs?\b|output|traceback|error|actual|happen", re.I),
}
_NOT_OURS = re.compile(r"\b(python|node|npm|os|operating|system|browser|java|go|rust)\b", re.I)
# An answer repeated word for word across reports is the form's prefilled text, when long.
_PREFILLED_MIN_WORDS = 5


@dataclass(frozen=True)
class DraftedField:
    """The form field that answers one starter question, and the form's prefilled text in it."""

    label: str
    prefilled: tuple[str, ...] = ()


def _prefilled(answers: list[str]) -> tuple[str, ...]:
    counts: dict[str, int] = {}
    for text in answers:
        said = normal(text)
        if len(said.split()) >= _PREFILLED_MIN_WORDS:
            counts[said] = counts.get(said, 0) + 1
    floor = max(3, len(answers) // 5)
    return tuple(sorted(t for t, n in counts.items() if n >= floor))


def draft_fields(bodies: list[str], forms: list[IssueForm]) -> dict[str, DraftedField]:
    """Per starter question ("the version", ...), the field that answers it: from `forms` (the
    checkout's form for the bug type) when given, else from the fields most of `bodies` (the
    bug reports read) answer, with the prefilled text they repeat."""
    seen: dict[str, list[str]] = {}
    shown: dict[str, str] = {}
    parsed = [a for b in bodies if (a := parse(b))]
    for answers in parsed:
        for key, answer in answers.fields.items():
            seen.setdefault(key, []).append(answer.text)
            shown.setdefault(key, answer.label)
    given: dict[str, str] = {}  # the forms' own prefilled text, by field
    if forms:
        fields = [f for form in forms for f in form.fields if f.kind != "checkboxes"]
        labels = [f.label for f in fields]
        given = {_key(f.label): normal(f.prefilled) for f in fields if normal(f.prefilled)}
    else:
        labels = [shown[k] for k, texts in seen.items() if len(texts) * 2 >= len(parsed) > 0]
    out: dict[str, DraftedField] = {}
    for what, pattern in _ROLES.items():
        fits = [
            lb
            for lb in labels
            if pattern.search(lb) and not (what == "the version" and _NOT_OURS.search(lb))
        ]
        if fits:
            label = fits[0]
            found = _prefilled(seen.get(_key(label), []))
            own = given.get(_key(label))
            out[what] = DraftedField(label, (own, *found) if own and own not in found else found)
    return out
