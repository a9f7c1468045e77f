"""`issue-assistant init`: label groups inferred from naming schemes, files that load, no
overwrites; on both shared snapshots, synthetic schemes, and the fake GitHub."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

from issue_assistant.cli import main
from issue_assistant.config.files import find_file, load_both
from issue_assistant.config.labels import load_labels
from issue_assistant.config.sections import load_config
from issue_assistant.init.draft import NEEDS_INFO, classify, first_paragraph
from tests.fakegithub import FakeGitHub
from tests.fakegithub.fixtures import TOKEN

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data"
DRAFTS = ".github/issue-assistant"  # where init writes labels.toml and config.toml
SNAPSHOTS = {"hf": DATA / "hf-datasets.jsonl.gz", "poetry": DATA / "poetry-sample.jsonl.gz"}


@pytest.mark.parametrize(
    ("name", "group", "propose"),
    [
        ("bug", "type", True),
        ("enhancement", "type", True),
        ("question", "type", True),
        ("documentation", "type", True),
        ("kind/bug", "type", True),
        ("type: feature", "type", True),
        ("type/docs", "type", True),
        ("C-bug", "type", True),
        ("Bugs", "type", True),
        ("Questions and Help", "type", True),  # bitcoin/bitcoin's
        ("question (invalid tracker)", "type", True),  # opencv/opencv's
        ("Enhancements", "type", True),
        ("category: core", "area", True),  # opencv/opencv's modules
        ("category: bug", "type", True),
        ("platform: android", "topic", True),
        ("stat:awaiting response", "-", False),  # tensorflow/tensorflow's
        ("*duplicate", "-", False),  # microsoft/vscode's resolutions
        ("*as-designed", "-", False),
        ("*out-of-scope", "-", False),
        ("*question", "type", True),
        ("Type: Needs Investigation", "-", False),  # facebook/react's: workflow in a type scheme
        ("kind/needs-triage", "-", False),
        ("type: needs info", "-", False),
        ("area/dependencies", "area", True),  # a workflow word is an area in an area scheme
        ("area/cli", "area", True),
        ("area-parser", "area", True),
        ("component: solver", "area", True),
        ("A-diagnostics", "area", True),
        ("topic: performance", "topic", True),
        ("priority/high", "priority", True),
        ("priority: low", "priority", True),
        ("P0", "priority", True),
        ("p3", "priority", True),
        ("status/triage", "-", False),
        ("needs-repro", "-", False),
        ("needs info", "-", False),
        ("triage", "-", False),
        ("duplicate", "-", False),
        ("wontfix", "-", False),
        ("invalid", "-", False),
        ("assistant: pending", "-", False),
        ("good first issue", "topic", False),
        ("help wanted", "topic", False),
        ("streaming", None, True),
    ],
)
def test_classify_naming_schemes(name, group, propose):
    got_group, got_propose, _ = classify(name)
    assert (got_group, got_propose) == (group, propose)


def _run(tmp_path: Path, *args: str) -> int:
    return main(["init", "--dir", str(tmp_path), *args])


def _comment_counts(text: str) -> dict[str, int]:
    """label -> the "used on N" comment of its table in the draft."""
    found = re.findall(r"^\[\[\w+\]\] +# used on (\d+)\nname = \"([^\"]+)\"", text, re.M)
    return {name: int(n) for n, name in found}


@pytest.mark.parametrize("which", sorted(SNAPSHOTS))
def test_draft_of_a_shared_snapshot_loads_and_counts_use(which, tmp_path, capsys):
    assert _run(tmp_path, "--snapshot", str(SNAPSHOTS[which])) == 0
    out = capsys.readouterr().out
    labels = load_labels(tmp_path / DRAFTS / "labels.toml")
    load_config(tmp_path / DRAFTS / "config.toml")
    assert (tmp_path / ".github/workflows/issue-assistant.yml").read_text() == (
        ROOT / "docs/workflow.yml"
    ).read_text()
    assert out.rstrip().endswith(
        f"issue-assistant config check --snapshot {SNAPSHOTS[which]}\n"
        f"  issue-assistant evaluate --snapshot {SNAPSHOTS[which]} --limit 50"
    )
    # what it inferred, in words (not labels.toml's keys)
    assert "  the label that asks the reporter for more: none recognised\n" in out
    assert "needs_info" not in out
    # The usage comments are the number of issues (not PRs) carrying each label.
    uses: dict[str, int] = {}
    with gzip.open(SNAPSHOTS[which], "rt", encoding="utf-8") as fh:
        for line in list(fh)[1:]:
            rec = json.loads(line)
            if not rec.get("is_pull_request"):
                for name in set(rec.get("labels") or []):
                    uses[name] = uses.get(name, 0) + 1
    counts = _comment_counts((tmp_path / DRAFTS / "labels.toml").read_text())
    assert counts and all(uses.get(name, 0) == n for name, n in counts.items())
    types = {lb.name: lb for lb in labels.type}
    if which == "poetry":
        assert set(types) == {"kind/bug", "kind/feature", "kind/question"}
        assert {lb.name for lb in labels.area} == {
            "area/build-system", "area/config", "area/core", "area/deps",
            "area/distribution", "area/docs", "area/solver", "area/venv",
        }  # fmt: skip
        assert [a.what for a in types["kind/bug"].ask] == [
            "the version", "steps to reproduce", "what happened",
        ]  # fmt: skip
        assert "status/triage" in out and "Left out" in out
    else:
        assert {"bug", "enhancement", "question", "documentation"} <= set(types)
        assert types["bug"].ask and types["bug"].description == "Something isn't working"
        never = {lb.name for lb in labels.topic if not lb.propose}
        assert {"good first issue", "help wanted"} <= never
        assert not {"duplicate", "wontfix"} & {lb.name for g in ("type", "area", "topic")
                                                for lb in labels.group(g)}  # fmt: skip
        assert "no repository description" in out


def _snapshot(path: Path, labels: list[tuple[str, str]], issues: list[list[str]]) -> Path:
    lines = [
        {
            "kind": "repository",
            "version": 1,
            "full_name": "acme/widget",
            "fetched_at": "2025-01-01T00:00:00Z",
            "labels": [{"name": n, "description": d, "color": "ededed"} for n, d in labels],
        }
    ]
    for i, names in enumerate(issues, 1):
        lines.append(
            {
                "kind": "issue",
                "number": i,
                "title": f"issue {i}",
                "body": "",
                "user": {"login": "u", "type": "User"},
                "created_at": "2024-06-01T00:00:00Z",
                "labels": names,
            }
        )
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


SCHEMES = {
    "colon": (
        [("type: bug", 'Broken "things" \\ here'), ("type: feature", ""),
         ("component: api", "The API"), ("priority: high", ""), ("status: needs info", ""),
         ("good first issue", "")],
        {"type": ["type: bug", "type: feature"], "area": ["component: api"],
         "priority": ["priority: high"]},
        "status: needs info",
    ),
    "slash-and-p": (
        [("kind/bug", ""), ("kind/enhancement", ""), ("area/docs", ""), ("topic/perf", ""),
         ("P1", "urgent"), ("P2", ""), ("needs-more-info", ""), ("triage", "")],
        {"type": ["kind/bug", "kind/enhancement"], "area": ["area/docs"],
         "topic": ["topic/perf"], "priority": ["P1", "P2"]},
        "needs-more-info",
    ),
    "dash": (
        [("bug", "é ünïcode ✓"), ("question", ""), ("area-cli", ""), ("area-core", ""),
         ("awaiting response", ""), ("wontfix", "")],
        {"type": ["bug", "question"], "area": ["area-cli", "area-core"]},
        "awaiting response",
    ),
}  # fmt: skip


@pytest.mark.parametrize(
    ("name", "asks"),
    [
        ("needs info", True),
        ("status: needs info", True),
        ("needs-more-info", True),
        ("stat:awaiting response", True),  # tensorflow/tensorflow's
        ("info-needed", True),  # microsoft/vscode's
        ("more-information-needed", True),
        ("more info needed", True),
        ("repro required", True),
        ("waiting for author", True),
        ("awaiting-feedback", True),
        ("needs-triage", False),
        ("needs design", False),
        ("information", False),
        ("feedback", False),
    ],
)
def test_the_label_that_asks_the_reporter_is_recognised(name, asks):
    assert bool(NEEDS_INFO.search(name.lower())) == asks


@pytest.mark.parametrize("scheme", sorted(SCHEMES))
def test_synthetic_naming_schemes(scheme, tmp_path, capsys):
    labels, groups, needs_info = SCHEMES[scheme]
    names = [n for n, _ in labels]
    snap = _snapshot(tmp_path / "s.jsonl", labels, [names[:2], names[:1], names[2:4]])
    out_dir = tmp_path / "out"
    assert _run(out_dir, "--snapshot", str(snap), "--json") == 0
    summary = json.loads(capsys.readouterr().out)
    loaded = load_labels(out_dir / DRAFTS / "labels.toml")
    got = {g: sorted(lb.name for lb in loaded.group(g) if lb.propose) for g in groups}
    assert got == {g: sorted(v) for g, v in groups.items()}
    assert loaded.needs_info == needs_info == summary["needs_info"]
    described = {lb.name: lb.description for g in groups for lb in loaded.group(g)}
    for name, description in labels:
        if name in described:
            assert described[name] == description  # quotes, backslashes, unicode survive
    assert summary["next"] == [
        f"issue-assistant config check --snapshot {snap}",
        f"issue-assistant evaluate --snapshot {snap} --limit 50",
    ]


@pytest.mark.parametrize("where", [".", ".github", DRAFTS])
def test_never_overwrites_without_force(tmp_path, capsys, where):
    """A labels.toml of ours anywhere it is looked for is kept (none is written beside it to
    shadow it); --force writes the drafts into .github/issue-assistant/."""
    mine = '# my own\n[[type]]\nname = "bug"\n'
    (tmp_path / where).mkdir(parents=True, exist_ok=True)
    (tmp_path / where / "labels.toml").write_text(mine)
    assert _run(tmp_path, "--snapshot", str(SNAPSHOTS["poetry"])) == 0
    out = capsys.readouterr().out
    assert (tmp_path / where / "labels.toml").read_text() == mine
    assert f"kept {tmp_path / where / 'labels.toml'}" in out and "--force" in out
    assert (tmp_path / DRAFTS / "config.toml").is_file()
    assert (tmp_path / DRAFTS / "labels.toml").is_file() == (where == DRAFTS)
    assert _run(tmp_path, "--snapshot", str(SNAPSHOTS["poetry"]), "--force") == 0
    assert "kind/bug" in (tmp_path / DRAFTS / "labels.toml").read_text()
    assert not list(tmp_path.rglob("*.tmp"))


def test_another_tools_root_config_does_not_stop_or_shadow_the_drafts(tmp_path, capsys):
    """Issue 17 item 5: a Hugo site's config.toml at the root is not ours: init writes its own
    under .github/issue-assistant/, and that is the one read."""
    hugo = 'baseURL = "https://example.org/"\ntitle = "Site"\n[params]\nx = 1\n'
    (tmp_path / "config.toml").write_text(hugo)
    assert _run(tmp_path, "--snapshot", str(SNAPSHOTS["poetry"])) == 0
    assert (tmp_path / "config.toml").read_text() == hugo
    assert find_file("config.toml", None, tmp_path) == tmp_path / DRAFTS / "config.toml"
    labels, config = load_both(None, None, tmp_path)
    assert config.approval.writes == "dry-run" and labels.type


def test_readme_first_paragraph_and_missing_readme(tmp_path, capsys):
    readme = tmp_path / "README.md"
    readme.write_text(
        "# Widget\n\n[![ci](https://x/badge.svg)](https://x)\n\n```sh\npip install w\n```\n\n"
        "Widget turns [gadgets](https://g) into\nwidgets.\n\nSecond paragraph.\n"
    )
    assert first_paragraph(readme.read_text()) == "Widget turns gadgets into widgets."
    out_dir = tmp_path / "out"
    assert _run(out_dir, "--snapshot", str(SNAPSHOTS["poetry"]), "--readme", str(readme)) == 0
    config = load_config(out_dir / DRAFTS / "config.toml")
    assert config.project.description == "Widget turns gadgets into widgets."
    assert config.approval.writes == "dry-run"
    assert _run(out_dir, "--snapshot", str(SNAPSHOTS["poetry"]), "--readme", "nope.md") == 2
    assert "nope.md: cannot read the README" in capsys.readouterr().err


def test_live_from_the_fake_github(tmp_path, capsys, monkeypatch):
    with FakeGitHub("octo/repo", token=TOKEN) as server:
        server.add_label("type: bug", description="Something is broken")
        server.add_label("area: docs", description="The documentation")
        server.add_label("status: stale")
        server.add_issue("a", labels=["type: bug"])
        server.add_issue("b", labels=["type: bug", "area: docs"])
        server.add_issue("c", labels=["area: docs"], is_pull_request=True)
        monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
        monkeypatch.setenv("GITHUB_API_URL", server.base_url)
        monkeypatch.delenv("GH_REPO", raising=False)
        assert _run(tmp_path, "-R", "octo/repo") == 0
    out = capsys.readouterr().out
    text = (tmp_path / DRAFTS / "labels.toml").read_text()
    assert _comment_counts(text) == {"type: bug": 2, "area: docs": 1}
    labels = load_labels(tmp_path / DRAFTS / "labels.toml")
    assert [lb.description for lb in labels.type] == ["Something is broken"]
    assert "octo/repo: 2 issues read" in out
    assert out.rstrip().endswith("issue-assistant evaluate --repo octo/repo --limit 50")


def test_no_repository_is_a_user_error(tmp_path, capsys, monkeypatch):
    for name in ("GH_REPO", "GITHUB_REPOSITORY"):
        monkeypatch.delenv(name, raising=False)
    assert _run(tmp_path) == 2
    assert "give -R OWNER/REPO" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())
