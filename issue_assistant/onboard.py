"""`init`'s flow: read the labels (GitHub or a snapshot), draft the files, write the new ones
atomically, and say what was inferred, what was not, and what to run next."""

from __future__ import annotations

import argparse
import base64
import itertools
import json
import shlex
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from issue_assistant.atomic import write_atomic
from issue_assistant.config import find_file
from issue_assistant.errors import GitHubError, UserError
from issue_assistant.published import published
from issue_assistant.render import render
from issue_assistant.scaffold import (
    GROUP_ORDER,
    LabelDraft,
    draft_labels,
    first_paragraph,
    toml_string,
    usage,
    workflow_text,
)
from issue_assistant.tracker.models import Issue, LabelInfo

EXPLAIN = {
    "type": "exactly one per issue",
    "area": "where in the project (at most max_areas)",
    "topic": "what it is about (at most max_topics)",
    "priority": "at most one",
}
WORKFLOW = Path(".github/workflows/issue-assistant.yml")
# Where the two files go: read first (config.SEARCH_DIRS), beside nothing of another tool's.
LABELS_FILE = Path(".github/issue-assistant/labels.toml")
CONFIG_FILE = Path(".github/issue-assistant/config.toml")
NEXT = ["issue-assistant config check", "issue-assistant evaluate {source} --limit 50"]


@dataclass
class Source:
    repository: str
    labels: list[LabelInfo]
    issues: list[Issue]
    description: str = ""
    readme: str | None = None
    notes: list[str] = field(default_factory=list)


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
    info = tracker.metadata()  # type: ignore[attr-defined]
    issues = list(itertools.islice(tracker.recent_issues(), max(0, limit)))  # type: ignore[attr-defined]
    source = Source(full_name, list(repo.labels), issues, info.get("description") or "")
    if not source.description:
        source.notes.append("the repository has no description on GitHub")
    try:
        data = tracker.readme()  # type: ignore[attr-defined]
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


def render_files(source: Source, draft: LabelDraft, description: str, origin: str) -> dict:
    common = {"repository": source.repository, "q": toml_string}
    labels = render(
        "init/labels.toml.j2",
        draft=draft,
        groups=GROUP_ORDER,
        explain=EXPLAIN,
        issues_counted=draft.issues_counted,
        **common,
    )
    config = render("init/config.toml.j2", description=description, source=origin, **common)
    workflow = workflow_text(published().action)
    return {LABELS_FILE: labels, CONFIG_FILE: config, WORKFLOW: workflow}


def check_labels(text: str) -> None:
    """The draft must load as labels.toml does: a failure here is a bug, said plainly."""
    from issue_assistant.config import load_labels

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "labels.toml"
        path.write_text(text, encoding="utf-8")
        load_labels(path)


def run_init(args: argparse.Namespace) -> int:
    from issue_assistant.settings import current

    if args.snapshot:
        source = read_snapshot_source(args.snapshot)
    else:
        if not (args.repository or current().repository):
            raise UserError("give -R OWNER/REPO (with GITHUB_TOKEN set) or --snapshot FILE")
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
    files = render_files(source, draft, description, origin)
    check_labels(files[LABELS_FILE])
    root = Path(args.dir)
    written, kept = [], []
    for rel, text in files.items():
        path = root / rel
        # A labels.toml or config.toml of ours elsewhere (the root, .github/) counts as there.
        there = find_file(rel.name, None, root) if rel != WORKFLOW else None
        if not args.force and (path.exists() or there is not None):
            kept.append(str(path if path.exists() else there))
            continue
        write_atomic(path, text)
        written.append(str(path))
    summary = {
        "repository": source.repository,
        "issues_counted": counted,
        "groups": {g: [lb.name for lb in draft.groups.get(g, [])] for g in GROUP_ORDER},
        "never_proposed": [lb.name for g in draft.groups.values() for lb in g if not lb.propose],
        "ungrouped": [lb.name for lb in draft.ungrouped],
        "left_out": [lb.name for lb in draft.left_out],
        "needs_info": draft.needs_info,
        "bug_type": draft.bug,
        "description_from": origin,
        "not_inferred": source.notes,
        "written": written,
        "kept": kept,
        "next": [cmd.format(source=origin_flag) for cmd in NEXT],
    }
    if args.json:
        print(json.dumps(summary, ensure_ascii=False))
    else:
        print(render("init/summary.txt.j2", s=summary, counts=draft.counts()), end="")
    return 0
