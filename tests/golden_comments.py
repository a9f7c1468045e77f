"""The reference comments in docs/comments/: real issues of the shared snapshots, replayed a minute
after they were opened through the `similar` engine, rendered as the Action would post them.

`tests/test_golden_comments.py` renders them again and compares, so a change of the comment's
voice is a reviewed diff. After an intended change, write them again (from the repository root):

    python -m tests.golden_comments
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from issue_assistant.config.labels import load_labels
from issue_assistant.config.sections import Config
from issue_assistant.engines import create
from issue_assistant.index import IssueIndex
from issue_assistant.index.local import open_index
from issue_assistant.pipeline import Analysis, replay
from issue_assistant.tracker.snapshot import read_snapshot

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
OUT = ROOT / "docs" / "comments"
HF_LABELS = ROOT / "bench" / "hf-datasets.labels.toml"
POETRY_LABELS = ROOT / "tests" / "data" / "evaluate" / "poetry.labels.toml"


def _replay(snapshot: Path, labels: Path, number: int, index: IssueIndex) -> Analysis:
    config = Config()
    labels_config = load_labels(labels)
    engine = create("similar", config, labels_config)
    tracker = read_snapshot(snapshot)
    return replay(tracker, number, index=index, labels=labels_config, config=config, engine=engine)


def bug_with_duplicate(index: IssueIndex) -> str:
    """poetry #10284, a bug report (its form set `kind/bug`) filed again a minute after #10283."""
    return _replay(DATA / "poetry-sample.jsonl.gz", POETRY_LABELS, 10284, index).comment


def bug_with_questions(index: IssueIndex) -> str:
    """hf-datasets #7391, a bug report that gives neither the version nor code to reproduce."""
    return _replay(DATA / "hf-datasets.jsonl.gz", HF_LABELS, 7391, index).comment


def feature_request(index: IssueIndex) -> str:
    """hf-datasets #7016, a feature request."""
    return _replay(DATA / "hf-datasets.jsonl.gz", HF_LABELS, 7016, index).comment


def documentation_report(index: IssueIndex) -> str:
    """hf-datasets #6950, a reporter's `Dataset.with_format` behaving unlike its documentation."""
    return _replay(DATA / "hf-datasets.jsonl.gz", HF_LABELS, 6950, index).comment


# file name -> (the snapshot whose index it needs, how it is made)
GOLDEN: dict[str, tuple[str, Callable[[IssueIndex], str]]] = {
    "bug-with-duplicate.md": ("poetry-sample.jsonl.gz", bug_with_duplicate),
    "bug-with-questions.md": ("hf-datasets.jsonl.gz", bug_with_questions),
    "feature-request.md": ("hf-datasets.jsonl.gz", feature_request),
    "documentation-report.md": ("hf-datasets.jsonl.gz", documentation_report),
}


def render_all(cache: Path) -> dict[str, str]:
    """Every reference comment, by file name, in the order of `GOLDEN`, on fresh indexes under
    `cache` (a label model saved by another run, at another moment, would change the words)."""
    indexes = {
        name: open_index(read_snapshot(DATA / name), cache / name)
        for name in dict.fromkeys(snapshot for snapshot, _ in GOLDEN.values())
    }
    return {name: make(indexes[snapshot]) for name, (snapshot, make) in GOLDEN.items()}


def main() -> int:
    with tempfile.TemporaryDirectory() as cache:
        OUT.mkdir(parents=True, exist_ok=True)
        for name, text in render_all(Path(cache)).items():
            (OUT / name).write_text(text, encoding="utf-8")
            print(f"wrote {OUT / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
