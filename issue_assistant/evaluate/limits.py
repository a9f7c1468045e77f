"""How many issues an evaluation replays (light: the CLI's parser reads these for `--help`)."""

DEFAULT_ISSUES = 50
MAX_ISSUES = 200
