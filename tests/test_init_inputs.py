"""`init` on real-world labels and folders (issue 16): every value through tomlkit, nothing
existing replaced (links included), odd labels drafted with a comment, and every bad folder or
README one line naming it. Each case records what it measured for `docs/reliability.md`.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from issue_assistant.cli import main
from issue_assistant.config.labels import load_labels
from issue_assistant.config.sections import load_config
from tests.test_init import SNAPSHOTS
from tests.test_races_faults import record

PROPERTY = "reliability"  # what each case records for tests/reliability.py

WORKFLOW = Path(".github/workflows/issue-assistant.yml")
LABELS = Path(".github/issue-assistant/labels.toml")
CONFIG = Path(".github/issue-assistant/config.toml")


def snapshot(path: Path, labels: list[str], full_name: str = "acme/widget") -> Path:
    lines = [
        {
            "kind": "repository",
            "version": 1,
            "full_name": full_name,
            "fetched_at": "2025-01-01T00:00:00Z",
            "labels": [{"name": n, "description": f"about {n}"} for n in labels],
        },
        {
            "kind": "issue",
            "number": 1,
            "title": "one",
            "body": "",
            "user": {"login": "u"},
            "created_at": "2024-06-01T00:00:00Z",
            "labels": labels[:3],
        },
    ]
    # ensure_ascii keeps a lone surrogate as `\\ud800` (as GitHub's JSON can send it)
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def run(out: Path, *args: str, capsys) -> tuple[int, str, str]:
    try:
        status = main(["init", "--dir", str(out), *args])
    except Exception as exc:  # noqa: BLE001 - what is measured
        status = -1
        captured = capsys.readouterr()
        return status, captured.out, captured.err + f"Traceback: {exc!r}"
    captured = capsys.readouterr()
    return status, captured.out, captured.err


BASE = ["kind/bug", "kind/feature", "area/docs", "status/triage", "needs info"]
ODD = {
    "a comma in a label": ["area/io, files"],
    # (`type: needs info` itself is a workflow name in a type scheme, left out: `test_init.py`)
    "a type label that looks like needs-info": ["type: bot needs info"],
    "an area label that looks like needs-info": ["area/needs-repro"],
    "a lone surrogate in a label": ["area/\ud800x"],
    "control characters in a left-out label": ["status/\x1b[31mred\nneeds_info = 'x'"],
    "a newline in a label": ["area/one\n[[type]]\nname = 'evil'"],
    "a label over 50 characters": ["area/" + "x" * 60],
    "spaces around a label": [" area/padded "],
}


@pytest.mark.parametrize("case", list(ODD))
def test_odd_labels_are_drafted_with_a_comment(tmp_path, capsys, record_property, case):
    # With no other needs-info label, a grouped one that looks like it must not be taken.
    looks_like = "looks like needs-info" in case
    base = [n for n in BASE if n != "needs info"] if looks_like else BASE
    needs_info = None if looks_like else "needs info"
    snap = snapshot(tmp_path / "s.jsonl", base + ODD[case])
    out = tmp_path / "out"
    status, stdout, err = run(out, "--snapshot", str(snap), capsys=capsys)
    tracebacks = int("Traceback" in err)
    wrong = 0
    if status == 0:
        data = tomllib.loads((out / LABELS).read_text(encoding="utf-8"))
        names = {t["name"] for g in ("type", "area", "topic", "priority") for t in data.get(g, [])}
        wrong = int(not {"kind/bug", "area/docs"} <= names)  # the usable ones stay
        wrong += int(data.get("needs_info") != needs_info)  # nothing injected, none in a group
        wrong += int(bool({"evil"} & names))
    record(record_property, "init", wrong, 0, tracebacks, kind=case, where="init --snapshot")
    assert status == 0 and tracebacks == 0, err
    labels = load_labels(out / LABELS)
    assert wrong == 0 and labels.needs_info == needs_info
    text = (out / LABELS).read_text(encoding="utf-8")
    assert all(c.isprintable() or c == "\n" for c in text)  # one printable line per comment
    assert all(c.isprintable() or c == "\n" for c in stdout)


def test_a_repository_name_with_a_newline_injects_nothing(tmp_path, capsys, record_property):
    name = 'acme/widget\nneeds_info = "injected"\n[[type]]\nname = "evil"'
    snap = snapshot(tmp_path / "s.jsonl", BASE, full_name=name)
    out = tmp_path / "out"
    status, _, err = run(out, "--snapshot", str(snap), capsys=capsys)
    data = tomllib.loads((out / LABELS).read_text()) if status == 0 else {}
    config = tomllib.loads((out / CONFIG).read_text()) if status == 0 else {}
    injected = int(data.get("needs_info") == "injected") + int(
        any(t["name"] == "evil" for t in data.get("type", []))
    )
    record(
        record_property,
        "init",
        injected,
        0,
        int("Traceback" in err),
        kind="a repository name with a newline",
        where="init --snapshot",
    )
    assert status == 0 and injected == 0 and set(config) == {"engine", "project", "approval"}
    load_config(out / CONFIG)


def test_a_description_with_quotes_newlines_and_toml_survives(tmp_path, capsys):
    readme = tmp_path / "README.md"
    readme.write_text('Widget """turns""" gadgets\' into \\ widgets [engine]\nname = "x".\n')
    out = tmp_path / "out"
    status, _, err = run(
        out, "--snapshot", str(SNAPSHOTS["poetry"]), "--readme", str(readme), capsys=capsys
    )
    assert status == 0, err
    config = load_config(out / CONFIG)
    assert config.project.description.startswith('Widget """turns""" gadgets\'')
    assert config.engine.name == "similar"


FOLDERS = {
    "--dir is a file": lambda root: (root.write_text("x"), root)[1],
    ".github is a file": lambda root: (root.mkdir(), (root / ".github").write_text("x"), root)[2],
    ".github/workflows is a file": lambda root: (
        (root / ".github").mkdir(parents=True),
        (root / ".github" / "workflows").write_text("x"),
        root,
    )[2],
    "a folder nothing can be written in": lambda root: Path("/proc"),
}


@pytest.mark.parametrize("case", list(FOLDERS))
def test_a_folder_in_the_way_is_one_line_and_nothing_is_written(
    tmp_path, capsys, record_property, case
):
    root = FOLDERS[case](tmp_path / "out")
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    status, _, err = run(root, "--snapshot", str(SNAPSHOTS["poetry"]), capsys=capsys)
    after = sorted(str(p) for p in tmp_path.rglob("*"))
    written = len(set(after) - set(before))
    record(
        record_property, "init", written, 0, int("Traceback" in err), kind=case, where="init --dir"
    )
    assert status == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert written == 0


def test_a_readme_that_is_not_utf8_is_one_line(tmp_path, capsys, record_property):
    readme = tmp_path / "README.md"
    readme.write_bytes(b"Widget \xff\xfe turns gadgets into widgets.\n")
    status, _, err = run(
        tmp_path / "out",
        "--snapshot",
        str(SNAPSHOTS["poetry"]),
        "--readme",
        str(readme),
        capsys=capsys,
    )
    record(
        record_property,
        "init",
        0,
        0,
        int("Traceback" in err),
        kind="a README that is not UTF-8",
        where="init --readme",
    )
    assert status == 2 and "README.md" in err and "not UTF-8" in err, err


@pytest.mark.parametrize("force", [False, True], ids=["", "--force"])
@pytest.mark.parametrize("dangling", [True, False], ids=["dangling link", "link to a file"])
def test_a_link_where_a_file_goes_is_never_replaced(
    tmp_path, capsys, record_property, dangling, force
):
    out = tmp_path / "out"
    (out / LABELS).parent.mkdir(parents=True)
    target = tmp_path / "mine.toml"
    if not dangling:
        target.write_text("# mine\n")
    (out / LABELS).symlink_to(target)
    args = ["--snapshot", str(SNAPSHOTS["poetry"])] + (["--force"] if force else [])
    status, stdout, err = run(out, *args, capsys=capsys)
    replaced = int(not (out / LABELS).is_symlink())
    replaced += int(target.exists() != (not dangling))
    replaced += int(not dangling and target.read_text() != "# mine\n")
    record(
        record_property,
        "init",
        replaced,
        0,
        int("Traceback" in err),
        kind=f"{'a dangling' if dangling else 'a'} link at labels.toml{' with --force' * force}",
        where="init --dir",
    )
    assert status == 0 and replaced == 0, err
    assert "a symbolic link, never replaced" in stdout
    assert (out / CONFIG).is_file()  # the rest is written
