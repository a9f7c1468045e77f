"""The CLI imports only what the chosen command needs: building the parser (what `--help` does)
imports no SDK, no GitHub client, no progress bars, no model runtime and no index."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ["github", "anthropic", "rich", "llama_cpp", "tantivy", "pydantic", "jinja2", "requests"]


def _modules(code: str) -> set[str]:
    listing = "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
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
