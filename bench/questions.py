"""Questions on the poetry sample: their precision and recall against what happened later, and
how many of the newest issues get something a maintainer can approve.

Each issue is replayed one minute after it was opened, with the labels.toml that `init` drafts
from the snapshot (the starter questions of the bug type), by the `similar` engine. An asked
question is scored per piece of information (the version, steps to reproduce, what happened):

- **needed**: after the moment, a maintainer asked for it (a comment of theirs with a `?` or a
  request such as "please provide" that names it, `ASKED`, or that points at the bug form, which
  asks for all three) or the reporter supplied it (`SUPPLIED`) in a comment after a maintainer's
  request;
- precision: asked and needed / asked; recall: asked and needed / needed.

Both sides are keyword rules on the later comments, so they undercount (a maintainer who fixed
the issue without asking needed nothing) and a question answered in a way the rules miss counts
as wrong. The same rules score the code before and after a change: run it with the other
checkout's package first on PYTHONPATH (`PYTHONPATH=/path/to/main python bench/questions.py`).

    python bench/questions.py [--snapshot FILE] [--newest 30]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import sys
import tempfile
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))  # `bench.common`; PYTHONPATH decides which package is measured

from bench.common import commit  # noqa: E402

POETRY = ROOT.parent / "shared" / "data" / "poetry-sample.jsonl.gz"
MINUTE = timedelta(minutes=1)
# What a maintainer's question names, and what a reporter's later comment supplies, per ask.
ASKED = {
    "the version": re.compile(r"\bversion\b|--version", re.I),
    "steps to reproduce": re.compile(r"reproduc|minimal|example|pyproject|\bsteps\b", re.I),
    "what happened": re.compile(r"\blogs?\b|output|traceback|-vvv|error message", re.I),
}
# A comment that asks: a question, or a request ("please provide ...", "fill out the form").
REQUEST = re.compile(r"\?|\bplease\b|\bprovide\b|\bshare\b|\bfill\b|\bshow us\b", re.I)
# Pointing at the form (or template) asks for all it asks.
THE_FORM = re.compile(r"\b(bug|issue)\s+(form|template|report form)\b|\bthe template\b", re.I)
SUPPLIED = {
    "the version": re.compile(r"(?<![\w.])v?\d+\.\d+(\.\d+)*\b|\bversion\b", re.I),
    "steps to reproduce": re.compile(r"```|reproduc|pyproject", re.I),
    "what happened": re.compile(r"Traceback|Error|Exception|```", re.I),
}


def _later(issue, moment):  # noqa: ANN001, ANN202
    return [c for c in issue.comments or [] if c.created_at > moment]


def needed(issue, moment, repo, anyone: bool = False) -> set[str]:  # noqa: ANN001
    """The pieces a maintainer asked for after `moment`, or the reporter supplied in a reply
    after a maintainer's question (a reporter's own follow-up that nobody asked for does not
    count: it may repeat what the issue already said). `anyone`: anyone but the reporter counts
    as a maintainer (the snapshot's list of maintainers leaves out active triagers)."""
    out: set[str] = set()
    asked = False
    for c in _later(issue, moment):
        mine = c.user.login.casefold() == issue.user.login.casefold()
        keeper = (
            not mine
            and not c.user.is_bot
            and (anyone or repo.is_maintainer(c.user.login, c.author_association))
        )
        request = keeper and bool(REQUEST.search(c.body))
        for what in ASKED:
            if request and (ASKED[what].search(c.body) or THE_FORM.search(c.body)):
                out.add(what)
            if mine and asked and SUPPLIED[what].search(c.body):
                out.add(what)
        asked = asked or request
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--snapshot", default=str(POETRY))
    parser.add_argument("--newest", type=int, default=30)
    args = parser.parse_args()

    import issue_assistant
    from issue_assistant.cli import main as cli
    from issue_assistant.config.labels import load_labels
    from issue_assistant.config.sections import Config
    from issue_assistant.engines import create
    from issue_assistant.index.local import open_index
    from issue_assistant.pipeline import replay
    from issue_assistant.tracker.snapshot import read_snapshot

    tmp = Path(tempfile.mkdtemp(prefix="bench-questions-"))
    with contextlib.redirect_stdout(io.StringIO()):
        assert cli(["init", "--snapshot", args.snapshot, "--dir", str(tmp), "--json"]) == 0
    labels = load_labels(tmp / ".github" / "issue-assistant" / "labels.toml")
    snap = read_snapshot(args.snapshot)
    index = open_index(snap, tmp / "cache")
    config = Config()
    engine = create("similar", config, labels)
    repo = snap.repository
    asks = {a.question: a.what for t in labels.type for a in t.ask}
    issues = sorted(
        (i for i in snap.all_issues() if not i.is_pull_request and i.comments is not None),
        key=lambda i: -i.number,
    )
    asked = right = need = right_any = need_any = 0
    approvable = newest_n = 0
    rows = []
    for pos, issue in enumerate(issues):
        d = replay(snap, issue.number, index=index, labels=labels, config=config,
                   engine=engine).decision  # fmt: skip
        moment = issue.created_at + MINUTE
        gold = needed(issue, moment, repo)
        mine = {asks[q] for q in d.questions if q in asks}
        asked += len(mine)
        right += len(mine & gold)
        need += len(gold)
        broad = needed(issue, moment, repo, anyone=True)
        right_any += len(mine & broad)
        need_any += len(broad)
        if pos < args.newest:
            newest_n += 1
            have = set(issue.labels)
            labels_new = [n for n in d.labels() if n not in have]
            something = bool(labels_new or d.duplicate or d.questions)
            approvable += something
            rows.append((issue.number, labels_new, d.duplicate, sorted(mine), sorted(broad)))

    def share(a: int, b: int) -> str:
        return f"{a / b:.2f} ({a}/{b})" if b else f"– ({a}/{b})"

    print(f"package: {Path(issue_assistant.__file__).parent}; commit of the bench: {commit()}")
    print(f"issues with known comments: {len(issues)}")
    print(f"question precision: {share(right, asked)}")
    print(f"question recall: {share(right, need)}")
    print(f"anyone but the reporter as the asker: precision {share(right_any, asked)}, "
          f"recall {share(right_any, need_any)}")  # fmt: skip
    print(f"newest {newest_n}: something to approve on {share(approvable, newest_n)}")
    for number, new_labels, dup, mine, gold in rows:
        shown = dup.number if dup else "-"
        print(f"  #{number}: labels {new_labels or '-'}, duplicate {shown}, "
              f"asked {mine or '-'}, needed (anyone) {gold or '-'}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
