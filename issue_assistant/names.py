"""The project's names, said once: the distribution (the import package stays `issue_assistant`
and the command `issue-assistant`), where its source is, and where its two files are looked for.

Light (no imports): the CLI's parser reads the lookup order for `--help`; `config/files.py`
searches in this order; a test keeps action.yml's inputs and docs/configuration.md saying the
same.
"""

from __future__ import annotations

#: the distribution's name on the package index (`issue-assistant` there is another project)
DISTRIBUTION = "issue-assistant-action"
#: where the source is; `pip install "DISTRIBUTION[extra] @ git+SOURCE"` installs this project
SOURCE = "https://github.com/issue-assistant/issue-assistant"

#: the folders a file is looked for in, in this order (then the root, when the file is ours)
SEARCH_DIRS = (".github/issue-assistant", ".github")


def install_line(extra: str = "") -> str:
    """The pip line that installs this project (with `extra`) from its repository."""
    what = f"{DISTRIBUTION}[{extra}]" if extra else DISTRIBUTION
    return f'pip install "{what} @ git+{SOURCE}"'


def lookup(name: str) -> str:
    """Where `name` (labels.toml or config.toml) is found when no path is given, in words."""
    folders = ", ".join(f"{d}/{name}" for d in SEARCH_DIRS)
    return f"{folders}, then ./{name} if it is issue-assistant's"


def lookup_order(name: str) -> str:
    """The whole order for `name`: the flag, the variable or the Action's input, the search."""
    stem = name.removesuffix(".toml")
    variable = f"ISSUE_ASSISTANT_{stem.upper()}"
    return f"--{stem} FILE, else ${variable} or the Action's `{stem}` input, else {lookup(name)}"
