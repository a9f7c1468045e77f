"""The CLI imports only what the chosen command needs: building the parser (what `--help` does)
imports no SDK, no GitHub client, no progress bars, no model runtime and no index."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from issue_assistant.tracker.models import Issue, Repository, User
from issue_assistant.tracker.snapshot import write_snapshot

HEAVY = ["github", "anthropic", "rich", "llama_cpp", "tantivy", "pydantic", "jinja2", "requests"]
# What `search` must not pay for: the engines and what they pull in (numpy, scikit-learn, the
# comment's markdown parser), pydantic-settings (the settings are a plain pydantic model).
NOT_FOR_SEARCH = {"numpy", "sklearn", "scipy", "markdown_it", "pydantic_settings", "github", "rich"}
ROOT = Path(__file__).resolve().parents[1]


def _modules(code: str, full: bool = False) -> set[str]:
    names = "sys.modules" if full else "{m.split('.')[0] for m in sys.modules}"
    listing = f"print(json.dumps(sorted({names})))"
    probe = f"{code}\nimport json, sys\n{listing}"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    return set(json.loads(out.splitlines()[-1]))


def test_import_cli_and_build_the_parser_import_nothing_heavy():
    loaded = _modules("import issue_assistant.cli as c\nc.build_parser()")
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))


def test_help_of_every_command_imports_nothing_heavy():
    from issue_assistant.cli import COMMANDS

    code = (
        "import contextlib, io\nfrom issue_assistant.cli import main\n"
        f"for name in {COMMANDS!r}:\n"
        "    with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n"
        "        main([name, '--help'])"
    )
    loaded = _modules(code)
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))


def test_a_command_still_gets_what_it_needs(tmp_path):
    # `config check` loads pydantic (the config models) but still no GitHub client or SDK.
    labels = tmp_path / "labels.toml"
    labels.write_text('[[type]]\nname = "bug"\n')
    loaded = _modules(
        "from issue_assistant.cli import main\n"
        f"assert main(['config', 'check', '--labels', {str(labels)!r}]) == 0"
    )
    assert "pydantic" in loaded
    assert not loaded & {"github", "anthropic", "llama_cpp", "rich"}


def _snapshot(tmp_path: Path) -> Path:
    t0 = datetime(2024, 2, 1, tzinfo=UTC)
    issues = [
        Issue(
            number=i,
            title=f"Loading parquet file {i} fails",
            body=f"error {i}",
            user=User(login="u"),
            created_at=t0 + timedelta(hours=i),
        )
        for i in range(1, 6)
    ]
    path = tmp_path / "snap.jsonl"
    write_snapshot(path, Repository(full_name="o/r", fetched_at=t0 + timedelta(days=9)), issues)
    return path


def test_a_warm_search_imports_no_engine_no_numpy_no_pydantic_settings(tmp_path):
    snap, cache = _snapshot(tmp_path), tmp_path / "cache"
    argv = ["search", "parquet", "--snapshot", str(snap), "--cache-dir", str(cache)]
    argv += ["--config", str(ROOT / "config.toml")]  # it has [engines.similar]
    run = f"from issue_assistant.cli import main\nassert main({argv!r}) == 0"
    _modules(run)  # the first run builds the index
    loaded = _modules(run, full=True)
    assert "tantivy" in loaded and "jinja2" in loaded  # it did search and print
    assert not {m.split(".")[0] for m in loaded} & NOT_FOR_SEARCH
    assert not {"issue_assistant.pipeline", "issue_assistant.engines.similar"} & loaded


def test_checking_an_engine_table_does_not_import_the_engine(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text('[engine]\nname = "similar"\n[engines.similar]\nneighbors = 5\n')
    bad = tmp_path / "bad.toml"
    bad.write_text("[engines.similar]\nneighbours = 5\n")
    loaded = _modules(
        "from issue_assistant.config.sections import load_config\n"
        "from issue_assistant.errors import UserError\n"
        f"assert load_config({str(config)!r}).options('similar').neighbors == 5\n"
        "try:\n"
        f"    load_config({str(bad)!r})\n"
        "except UserError as exc:\n"
        "    assert 'neighbours' in str(exc), exc\n"
        "else:\n"
        "    raise AssertionError('a misspelt key passed')"
    )
    assert not loaded & {"numpy", "sklearn", "markdown_it"}


def test_the_options_known_without_the_engine_are_the_engines_own():
    from issue_assistant.engine_registry import BUILTIN_OPTIONS, engine_class, options_class

    for name in BUILTIN_OPTIONS:
        assert options_class(name) is engine_class(name).Options


def test_a_warm_analyze_imports_no_client_no_sdk(tmp_path):
    snap, cache = _snapshot(tmp_path), tmp_path / "cache"
    argv = ["analyze", "--snapshot", str(snap), "--issue", "5", "--cache-dir", str(cache)]
    argv += ["--labels", str(ROOT / "labels.toml"), "--config", str(ROOT / "config.toml")]
    run = f"from issue_assistant.cli import main\nassert main({argv!r}) == 0"
    _modules(run)  # the first run builds the index (and fits what it can)
    loaded = _modules(run)
    assert {"numpy", "tantivy", "jinja2", "markdown_it"} <= loaded  # the similar engine ran
    assert not loaded & {"github", "anthropic", "rich", "llama_cpp", "pydantic_settings", "mcp"}
    # The label model predicts with numpy alone (learn/linear.py): scikit-learn fits, once.
    assert not loaded & {"sklearn", "scipy"}
