"""What a release publishes, read from the one place a release sets: the package's metadata.

The repository is `[project.urls] Repository` in pyproject.toml and the version is `version`
there; from them come the action's reference (`OWNER/NAME@vMAJOR`, what `init` writes into the
workflow) and the image `action.yml` pulls (`ghcr.io/owner/name:vMAJOR`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from issue_assistant.errors import UserError
from issue_assistant.names import DISTRIBUTION

#: owners and names that stand for "yours" in examples; a `uses:` naming one cannot run
PLACEHOLDERS = frozenset(
    {"OWNER", "REPO", "NAME", "USER", "ORG", "YOUR-ORG", "YOUR_ORG", "FORK-OWNER", "FORK-NAME"}
)
_GITHUB = re.compile(r"^https://github\.com/([\w.-]+)/([\w.-]+?)(?:\.git)?/?$")
_USES = re.compile(r"""^\s*(?:-\s+)?uses:\s*["']?([^\s"'#]+)""")


@dataclass(frozen=True)
class Published:
    repository: str  # OWNER/NAME, as GitHub spells it
    version: str

    @property
    def major(self) -> str:
        return "v" + self.version.split(".", 1)[0]

    @property
    def action(self) -> str:
        """What a workflow's `uses:` names: the newest release of this major version."""
        return f"{self.repository}@{self.major}"

    @property
    def source(self) -> str:
        """The action from source (`source/action.yml` on main): it runs before any release."""
        return f"{self.repository}/source@main"

    @property
    def image(self) -> str:
        """The image of the newest release of this major version (registries want lowercase)."""
        return f"ghcr.io/{self.repository.lower()}:{self.major}"


def repository_of(urls: list[str]) -> str | None:
    """OWNER/NAME from the `Project-URL` entries (`Repository, https://github.com/OWNER/NAME`)."""
    for entry in urls:
        label, _, url = entry.partition(",")
        match = _GITHUB.match(url.strip())
        if label.strip().lower() == "repository" and match:
            return f"{match.group(1)}/{match.group(2)}"
    return None


def _source_project() -> dict | None:
    """pyproject.toml's [project] when running from the project's own checkout (an editable
    install, whose installed metadata is only as new as its last `pip install`)."""
    import tomllib

    path = Path(__file__).resolve().parents[1] / "pyproject.toml"
    try:
        project = tomllib.loads(path.read_text(encoding="utf-8")).get("project", {})
    except (OSError, tomllib.TOMLDecodeError):
        return None
    return project if project.get("name") == DISTRIBUTION else None


def published() -> Published:
    """The repository and version of the package's metadata (pyproject.toml in a checkout)."""
    from importlib import metadata

    project = _source_project()
    if project is not None:
        urls = [f"{k}, {v}" for k, v in project.get("urls", {}).items()]
        version = project.get("version", "")
    else:
        try:
            meta = metadata.metadata(DISTRIBUTION)
        except metadata.PackageNotFoundError:
            raise UserError(
                "issue-assistant is not installed, so the action it belongs to is not known: "
                "install it (pip install -e .)"
            ) from None
        urls, version = meta.get_all("Project-URL") or [], meta["Version"]
    repository = repository_of(urls)
    if repository is None or not version:
        raise UserError(
            'the package names no `Repository = "https://github.com/OWNER/NAME"` in '
            "[project.urls] of pyproject.toml, or no version"
        )
    return Published(repository, version)


def placeholder_uses(text: str) -> list[tuple[int, str]]:
    """(line, reference) of each `uses:` whose owner or name is a placeholder (`OWNER/...`)."""
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        match = _USES.match(line)
        if match is None or match.group(1).startswith(("./", "docker://")):
            continue
        reference = match.group(1)
        owner, _, rest = reference.partition("/")
        name = re.split(r"[/@]", rest, maxsplit=1)[0]
        if owner in PLACEHOLDERS or name in PLACEHOLDERS:
            found.append((number, reference))
    return found


def check_workflows(root: Path) -> list[Path]:
    """The workflow files under `root/.github/workflows`, checked: a `uses:` with a placeholder
    is an error naming the file and line and the reference to write instead."""
    folder = root / ".github" / "workflows"
    files = sorted(p for p in folder.glob("*") if p.suffix in (".yml", ".yaml") and p.is_file())
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UserError(f"cannot read the workflow ({exc})", where=str(path)) from None
        for number, reference in placeholder_uses(text):
            raise UserError(
                f"`uses: {reference}` is a placeholder and cannot run: write "
                f"`uses: {published().action}` (the published action)",
                where=f"{path}:{number}",
            )
    return files
