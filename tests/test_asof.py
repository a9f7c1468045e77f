"""The point-in-time view on the poetry sample, which has real events and comments."""

from datetime import UTC, datetime, timedelta

import pytest

from issue_assistant.tracker.asof import AsOfView, rewind


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def test_view_hides_later_issues_and_the_issue_itself(poetry_snapshot):
    view = AsOfView.for_issue(poetry_snapshot, 10184)
    assert view.moment == poetry_snapshot.get_issue(10184).created_at + timedelta(minutes=1)
    numbers = [i.number for i in view.all_issues()]
    assert 10184 not in numbers
    assert 10185 not in numbers  # opened five minutes later
    assert all(i.created_at <= view.moment for i in view.all_issues())
    assert 10153 in numbers
    with pytest.raises(KeyError):
        view.get_issue(10185)


def test_target_has_labels_of_the_moment_and_no_later_comment(poetry_snapshot):
    view = AsOfView.for_issue(poetry_snapshot, 10184)
    target = view.target()
    assert target.state == "open" and target.closed_at is None
    assert target.labels == ["kind/bug", "status/triage"]  # area/core came the next day
    assert target.comments == []
    assert poetry_snapshot.get_issue(10184).comments  # the snapshot itself has them


def test_labels_state_and_comments_rewound_for_other_issues(poetry_snapshot):
    moment = at("2025-02-08T03:00:00")
    view = AsOfView(poetry_snapshot, moment)
    earlier = view.get_issue(10160)
    assert earlier.labels == ["kind/bug", "status/triage"]  # later: unlabeled, two areas added
    assert earlier.state == "open"
    assert all(c.created_at <= moment for c in earlier.comments)
    now = poetry_snapshot.get_issue(10160)
    assert now.state == "closed" and "area/build-system" in now.labels

    closed = view.get_issue(10153)
    assert closed.state == "closed" and closed.labels == ["kind/bug", "area/solver"]


def test_relabelled_type_shows_the_old_type(poetry_snapshot):
    issue = poetry_snapshot.get_issue(10131)
    assert issue.labels == ["kind/question"]
    before = rewind(issue, issue.created_at + timedelta(minutes=1))
    assert before.labels == ["kind/bug", "status/triage"]


def test_unknown_events_mean_labels_count_as_added_later(hf_snapshot):
    view = AsOfView.for_issue(hf_snapshot, 7016)
    assert hf_snapshot.get_issue(7016).labels == ["duplicate", "enhancement"]
    assert view.target().labels == []
    assert view.target().events is None and view.target().comments is None


def test_duplicate_known_only_once_marked(poetry_snapshot):
    issue = poetry_snapshot.get_issue(10250)
    assert issue.duplicate_of == 10195
    assert rewind(issue, issue.created_at + timedelta(minutes=1)).duplicate_of is None
    assert rewind(issue, poetry_snapshot.repository.fetched_at).duplicate_of == 10195


# ---- issue 8 item 12: whole references only ---------------------------------------------------


def _dup(issue, text: str, hours: int):
    from issue_assistant.tracker.models import Comment, User

    comment = Comment(
        user=User(login="x"), created_at=issue.created_at + timedelta(hours=hours), body=text
    )
    return comment


@pytest.mark.parametrize(
    "early",
    [
        "see #123 for the same thing",
        "#1234",
        "abc#12",
        "other/repo#12",
        "https://github.com/other/repo/issues/12",
        "https://github.com/python-poetry/poetry/issues/123",
        "#12-b",
        "&#12;",
    ],
)
def test_an_early_comment_naming_another_number_does_not_date_the_mark(poetry_snapshot, early):
    from issue_assistant.tracker.asof import duplicate_at

    issue = poetry_snapshot.get_issue(10250).model_copy(update={"duplicate_of": 12, "events": []})
    later = issue.created_at + timedelta(hours=5)
    comments = [_dup(issue, early, 1), _dup(issue, "Duplicate of #12", 5)]
    issue = issue.model_copy(update={"comments": comments})
    repo = "python-poetry/poetry"
    assert duplicate_at(issue, issue.created_at + timedelta(hours=2), repo) is None
    assert duplicate_at(issue, later, repo) == 12


@pytest.mark.parametrize(
    "text",
    [
        "Duplicate of #12",
        "duplicate of #12.",
        "(#12)",
        "python-poetry/poetry#12",
        "https://github.com/python-poetry/poetry/issues/12",
        "see https://github.com/Python-Poetry/Poetry/issues/12#issuecomment-1",
    ],
)
def test_whole_references_date_the_mark(poetry_snapshot, text):
    from issue_assistant.tracker.asof import duplicate_at

    issue = poetry_snapshot.get_issue(10250).model_copy(update={"duplicate_of": 12, "events": []})
    issue = issue.model_copy(update={"comments": [_dup(issue, text, 1)]})
    repo = "python-poetry/poetry"
    assert duplicate_at(issue, issue.created_at + timedelta(hours=2), repo) == 12
    assert duplicate_at(issue, issue.created_at + timedelta(minutes=30), repo) is None


def test_the_view_passes_its_repository(poetry_snapshot):
    view = AsOfView(poetry_snapshot, poetry_snapshot.repository.fetched_at)
    assert view.get_issue(10250).duplicate_of == 10195
