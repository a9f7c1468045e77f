"""`backlog --duplicates` on the fake GitHub: the groups, `--post`, and what approval writes."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

import pytest

from issue_assistant.approve.sweep import Approver
from issue_assistant.backlog.duplicates import duplicates_live, render_groups
from issue_assistant.comment import extract_plan
from tests.fakegithub import FakeGitHub
from tests.fakegithub.fixtures import make_tracker
from tests.test_approve import CONFIG, LABELS
from tests.test_backlog import BOT, NOW, PENDING, REPO

TRACE = """Loading the dataset with streaming fails.

```
Traceback (most recent call last):
  File "/usr/lib/python3.11/site-packages/datasets/iterable_dataset.py", line 1384, in __iter__
    for key, example in ex_iterable:
  File "/usr/lib/python3.11/site-packages/datasets/builder.py", line 922, in _generate_examples
KeyError: 'train_split_missing'
```
"""


@pytest.fixture
def gh():
    with FakeGitHub(REPO, token="test-token") as server:
        day = datetime(2025, 1, 1, tzinfo=UTC)
        server.add_issue(
            "KeyError train_split_missing when streaming a dataset", TRACE, created_at=day
        )
        server.add_issue(
            "Docs: typo in the loading guide",
            "The word 'recieve' is misspelled.",
            created_at=day + timedelta(days=1),
        )
        server.add_issue(
            "Streaming a dataset raises KeyError train_split_missing",
            TRACE + "\nSame on Python 3.12.",
            "bob",
            created_at=day + timedelta(days=5),
        )
        server.add_issue(
            "Add a progress bar to map",
            "It would be nice to see progress.",
            created_at=day + timedelta(days=6),
        )
        server.set_permission("maria", "maintain")
        server.clock = NOW - timedelta(minutes=5)
        yield server


def find(gh, tmp_path, **kw):
    return duplicates_live(
        make_tracker(gh), LABELS, CONFIG, now=NOW, cache_dir=tmp_path / "cache", **kw
    )


def test_the_group_with_its_original_and_evidence_and_nothing_written(gh, tmp_path):
    found = find(gh, tmp_path, writes="live")
    [group] = found.groups
    assert [m.number for m in group.members] == [1, 3] and group.original.number == 1
    [link] = group.links
    assert (link.newer, link.older) == (3, 1) and link.score >= 0.9
    assert "the same error `KeyError: " in link.shows
    assert gh.writes == []  # nothing posted or closed without --post
    text = found.markdown
    assert f"[#1](https://github.com/{REPO}/issues/1)" in text and "Nothing was closed" in text
    assert text.splitlines()[2].startswith("1 group(s) of open issues that report the same")
    assert "most likely repeats" in text and "threshold" not in text
    assert "| the same error `KeyError: " in text  # what carries the link, as a comment says it
    assert found.outputs()["groups"] == [
        {"original": 1, "members": [1, 3], "links": [{"issue": 3, "like": 1, "score": link.score}]}
    ]


def test_post_proposes_only_the_duplicate_and_approval_writes_only_that(gh, tmp_path):
    found = find(gh, tmp_path, writes="live", post=True)
    assert [i.number for i in found.run.proposed] == [3]
    [comment] = [c for c in gh.comments.values() if c.user == BOT]
    assert comment.issue == 3
    plan = extract_plan(comment.body)
    assert plan.duplicate.number == 1 and plan.labels() == [] and plan.questions == []
    assert "**Possibly the same problem as #1**" in comment.body
    assert gh.issues[3].labels == [PENDING] and gh.issues[1].labels == []
    # idempotent: a second run posts nothing more
    again = find(gh, tmp_path, writes="live", post=True)
    assert again.run.proposed == [] and len([c for c in gh.comments.values() if c.user == BOT]) == 1
    # a maintainer approves: "Duplicate of #1" and the close ([duplicates] close), on #3 only
    gh.add_reaction(comment.id, "maria", "+1")
    gh.clear_requests()
    [result] = Approver(make_tracker(gh), LABELS, CONFIG, writes="live", now=NOW).run()
    assert result.status == "approved"
    touched = {path.split("/issues/")[1].split("/")[0] for _, path, _ in gh.issue_writes}
    assert touched <= {"3", "comments"}
    bodies = [c.body for c in gh.comments.values() if c.issue == 3 and c.user == BOT]
    assert "Duplicate of #1" in bodies
    assert gh.issues[3].state == "closed" and gh.issues[3].state_reason == "duplicate"
    assert gh.issues[1].state == "open" and gh.issues[1].labels == []
    assert not any(c.issue == 1 for c in gh.comments.values())


def test_post_in_dry_run_writes_nothing(gh, tmp_path):
    found = find(gh, tmp_path, writes="dry-run", post=True)
    assert [i.number for i in found.run.proposed] == [3]
    assert gh.writes == []
    assert "no comment was posted (1 would be)" in found.markdown


def test_a_report_without_groups_says_so_plainly(gh, tmp_path):
    found = find(gh, tmp_path, writes="live")
    text = render_groups(dataclasses.replace(found, groups=[]))
    assert text.splitlines()[2].startswith("No open issues that report the same problem, among")
    assert "0 group" not in text and "threshold" not in text
