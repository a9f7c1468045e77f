"""`init`'s flow: read the labels (GitHub or a snapshot), draft the files, write the new ones
atomically, and say what was inferred, what was not, and what to run next."""

from __future__ import annotations

import argparse
import base64
import itertools
import json
import logging
import os
import shlex
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from issue_assistant.atomic import write_atomic
from issue_assistant.config.files import find_file
from issue_assistant.errors import NO_SOURCE, GitHubError, UserError
from issue_assistant.forms import DraftedField, draft_fields, read_forms
from issue_assistant.init.draft import (
    GROUP_ORDER,
    LabelDraft,
    draft_labels,
    first_paragraph,
    usage,
    workflow_text,
)
from issue_assistant.init.files import comment_text, config_toml, labels_toml
from issue_assistant.published import published
from issue_assistant.render import render
from issue_assistant.tracker.models import Issue, LabelInfo

log = logging.getLogger(__name__)
WORKFLOW = Path(".github/workflows/issue-assistant.yml")
# Where the two files go: read first (config.SEARCH_DIRS), beside nothing of another tool's.
LABELS_FILE = Path(".github/issue-assistant/labels.toml")
CONFIG_FILE = Path(".github/issue-assistant/config.toml")
NEXT = [
    "issue-assistant config check {source}",
    "issue-assistant evaluate {source} --limit 50",
]


@dataclass
class Source:
    repository: str
    labels: list[LabelInfo]
    issues: list[Issue]
    description: str = ""
    readme: str | None = None
    notes: list[str] = field(default_factory=list)
    inferred: list[str] = field(default_factory=list)


def read_snapshot_source(path: str) -> Source:
    from issue_assistant.tracker.snapshot import read_snapshot

    snapshot = read_snapshot(path)
    repo = snapshot.repository
    notes = ["the snapshot holds no repository description"]
    if not repo.labels:
        notes.append("the snapshot lists no labels: the labels seen on issues are used")
    return Source(repo.full_name, list(repo.labels), list(snapshot.all_issues()), notes=notes)


def read_github_source(full_name: str, limit: int) -> Source:
    from issue_assistant.live import connect

    tracker = connect(full_name)
    repo = tracker.repository
    info = tracker.metadata()
    issues = list(itertools.islice(tracker.recent_issues(), max(0, limit)))
    source = Source(full_name, list(repo.labels), issues, info.get("description") or "")
    if not source.description:
        source.notes.append("the repository has no description on GitHub")
    try:
        data = tracker.readme()
        source.readme = base64.b64decode(data.get("content") or "").decode("utf-8", "replace")
    except GitHubError as exc:
        source.notes.append(f"no README read ({exc.status or 'no answer'})")
    return source


def describe(source: Source, readme_file: str | None) -> tuple[str, str]:
    """The project description and where it came from."""
    readme = source.readme
    where = "the README on GitHub"
    if readme_file:
        try:
            readme = Path(readme_file).read_text(encoding="utf-8")
        except OSError as exc:
            raise UserError(f"cannot read the README ({exc.strerror})", where=readme_file) from None
        except UnicodeDecodeError as exc:
            raise UserError(
                f"the README is not UTF-8 text ({exc.reason} at byte {exc.start})",
                where=readme_file,
            ) from None
        where = readme_file
    para = first_paragraph(readme) if readme else ""
    parts = [p for p in (source.description, para) if p]
    if not parts:
        source.notes.append("no project description: write [project] description in config.toml")
        return "", ""
    names = (["the repository description"] if source.description else []) + (
        [where] if para else []
    )
    return "\n\n".join(parts), " and ".join(names)


def form_fields(source: Source, draft: LabelDraft, root: Path) -> dict[str, DraftedField]:
    """Which issue-form field answers each of the bug type's starter questions: from the
    checkout's forms that add the bug label, else from the bug reports' bodies."""
    if draft.bug is None:
        return {}
    found = [f for f in read_forms(root) if draft.bug in f.labels]
    bodies = [i.body or "" for i in source.issues if draft.bug in i.labels]
    fields = draft_fields(bodies, found)
    if fields:
        where = "the checkout's issue forms" if found else "the bug reports' form fields"
        names = ", ".join(f"{what}: '{f.label}'" for what, f in fields.items())
        source.inferred.append(f"questions answered by {where}: {names}")
    return fields


def backlog_groups(source: Source, labels_text: str) -> tuple[list[str], int]:
    """The label groups the open issues read lack (by the drafted labels.toml), and how many
    open issues were read."""
    import tomllib

    from issue_assistant.config.labels import LabelsConfig

    labels = LabelsConfig.model_validate(tomllib.loads(labels_text))
    opened = [i.labels for i in source.issues if i.state == "open" and not i.is_pull_request]
    return (list(labels.lacking(opened)) if opened else []), len(opened)


def render_files(
    source: Source,
    draft: LabelDraft,
    description: str,
    origin: str,
    fields: dict[str, DraftedField] | None = None,
) -> dict:
    labels = labels_toml(draft, source.repository, fields)
    config = config_toml(source.repository, description, origin, backlog_groups(source, labels))
    workflow = workflow_text(published().action)
    return {LABELS_FILE: labels, CONFIG_FILE: config, WORKFLOW: workflow}


def check_draft(files: dict[Path, str], root: Path) -> None:
    """The drafts must load as labels.toml and config.toml do: a failure here is a bug in the
    drafting, said with the file it was meant for (not the temporary copy checked)."""
    from issue_assistant.config.labels import load_labels
    from issue_assistant.config.sections import load_config

    with tempfile.TemporaryDirectory() as tmp:
        for rel, load in ((LABELS_FILE, load_labels), (CONFIG_FILE, load_config)):
            path = Path(tmp) / rel.name
            path.write_text(files[rel], encoding="utf-8")
            try:
                load(path)
            except UserError as exc:
                message = str(exc).removeprefix(f"{exc.where}: ") if exc.where else str(exc)
                where = str(root / rel) + (exc.where or "").removeprefix(str(path))
                raise UserError(
                    f"the drafted {rel.name} does not load (a bug in init; nothing was "
                    f"written): {message}",
                    where=where,
                ) from None


def target_dir(root: Path) -> None:
    """`--dir` must be a folder, or a path one can be made at."""
    if os.path.lexists(root) and not root.is_dir():
        raise UserError("--dir is not a folder", where=str(root))


def keep_reason(path: Path, force: bool) -> str | None:
    """Why `path` is kept as it is, or None when it is to be written. A link (even a dangling
    one) is never replaced, nor is anything without `--force`; a folder in the way is an error,
    found before anything is written."""
    for parent in reversed(path.parents):
        if os.path.lexists(parent) and not parent.is_dir():
            raise UserError("not a folder: nothing can be written under it", where=str(parent))
    if path.is_symlink():
        return "a symbolic link, never replaced"
    if os.path.lexists(path) and not path.is_file():
        raise UserError("not a file: nothing can be written there", where=str(path))
    if os.path.lexists(path) and not force:
        return "it exists; --force to overwrite"
    return None


def write_new(path: Path, text: str) -> None:
    try:
        write_atomic(path, text)
    except OSError as exc:
        raise UserError(f"cannot write ({exc.strerror or exc})", where=str(path)) from None


def run_init(args: argparse.Namespace) -> int:
    from issue_assistant.settings import current

    if args.snapshot:
        source = read_snapshot_source(args.snapshot)
    else:
        if not (args.repository or current().repository):
            raise UserError(NO_SOURCE)
        source = read_github_source(current().require_repository(args.repository), args.limit)
    origin_flag = (
        f"--snapshot {shlex.quote(args.snapshot)}"
        if args.snapshot
        else f"--repo {source.repository}"
    )
    counts, counted = usage(source.issues)
    draft = draft_labels(source.labels, counts, counted)
    if not draft.groups.get("type"):
        source.notes.append("no type label recognised: add [[type]] entries by hand")
    if draft.bug is None:
        source.notes.append("no bug type recognised: no starter [[type.ask]] list")
    description, origin = describe(source, args.readme)
    root = Path(args.dir)
    target_dir(root)
    files = render_files(source, draft, description, origin, form_fields(source, draft, root))
    check_draft(files, root)
    # Decided for every file before anything is written (a folder in the way stops them all).
    decided: list[tuple[Path, str, str | None]] = []
    for rel, text in files.items():
        path = root / rel
        why = keep_reason(path, args.force)
        # A labels.toml or config.toml of ours elsewhere (the root, .github/) counts as there.
        there = find_file(rel.name, None, root) if rel != WORKFLOW else None
        if why is None and not args.force and there is not None and not path.exists():
            path, why = there, "it exists; --force to write the new one beside it"
        decided.append((path, text, why))
    written, kept, why_kept = [], [], {}
    for path, text, why in decided:
        if why is None:
            write_new(path, text)
            written.append(str(path))
        else:
            kept.append(str(path))
            why_kept[str(path)] = why
    summary = {
        "repository": source.repository,
        "issues_counted": counted,
        "groups": {g: [lb.name for lb in draft.groups.get(g, [])] for g in GROUP_ORDER},
        "never_proposed": [lb.name for g in draft.groups.values() for lb in g if not lb.propose],
        "ungrouped": [lb.name for lb in draft.ungrouped],
        "left_out": [lb.name for lb in draft.left_out],
        "unusable": {lb.name: lb.reason for lb in draft.unusable},
        "needs_info": draft.needs_info,
        "bug_type": draft.bug,
        "inferred": source.inferred,
        "description_from": origin,
        "not_inferred": source.notes,
        "written": written,
        "kept": kept,
        "next": [cmd.format(source=origin_flag) for cmd in NEXT],
        "action": {"uses": published().action, "before_release": published().source},
    }
    if args.json:
        print(json.dumps(summary, ensure_ascii=False))
    else:
        text = render("init/summary.txt.j2", s=summary, counts=draft.counts(), why=why_kept)
        # Label names are the repository's text: one printable line each on the terminal.
        print("\n".join(comment_text(line) for line in text.split("\n")), end="")
    return 0
