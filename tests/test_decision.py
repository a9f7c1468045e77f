"""Validation of an engine's decision against the label set and the tracker."""

from datetime import UTC, datetime

from issue_assistant.decision import Decision, Duplicate, answer_schema, validate
from issue_assistant.tracker.models import Issue, Repository, User
from issue_assistant.tracker.snapshot import Snapshot


def issue(number: int, day: int, **kw) -> Issue:
    return Issue(
        number=number,
        title=f"issue {number}",
        user=User(login="u"),
        created_at=datetime(2024, 1, day, tzinfo=UTC),
        **kw,
    )


def tracker() -> Snapshot:
    repo = Repository(full_name="o/r", fetched_at=datetime(2024, 2, 1, tzinfo=UTC))
    return Snapshot(
        repo,
        [
            issue(1, 1),
            issue(2, 2, duplicate_of=1),
            issue(3, 3, is_pull_request=True),
            issue(4, 4, duplicate_of=5),
            issue(5, 5, duplicate_of=4),
            issue(9, 9),
            issue(10, 10),
        ],
    )


def test_unknown_labels_dropped_and_counted(project_labels):
    d = Decision(
        type="feature",
        areas=["engine", "nope", "github", "index"],
        topics=["security"],
        priority="P3",
    )
    v = validate(d, project_labels, None, issue(10, 10))
    assert v.type is None
    assert v.areas == ["engine", "github"]  # max_areas = 2
    assert v.priority is None  # P3 is never proposed
    assert sorted(v.dropped) == ["P3", "feature", "index", "nope"]
    assert v.topics == ["security"]


def test_labels_already_on_the_issue_are_not_proposed_again(project_labels):
    v = validate(
        Decision(type="bug", areas=["engine"]), project_labels, None, issue(10, 10, labels=["bug"])
    )
    assert v.type is None and v.areas == ["engine"] and v.dropped == []


def test_duplicate_must_exist_be_older_and_an_issue(project_labels):
    t, me = tracker(), issue(10, 10)

    def dup(n: int) -> int | None:
        v = validate(Decision(duplicate=Duplicate(number=n, reason="same")), project_labels, t, me)
        return v.duplicate.number if v.duplicate else None

    assert dup(1) == 1
    assert dup(10) is None  # itself
    assert dup(3) is None  # a pull request
    assert dup(77) is None  # unknown
    v = validate(Decision(duplicate=Duplicate(number=1)), project_labels, t, issue(1, 1))
    assert v.duplicate is None
    later = validate(Decision(duplicate=Duplicate(number=10)), project_labels, t, issue(9, 9))
    assert later.duplicate is None  # newer than the issue


def test_duplicate_of_a_duplicate_resolves_to_the_original(project_labels):
    v = validate(
        Decision(duplicate=Duplicate(number=2, reason="same crash")),
        project_labels,
        tracker(),
        issue(10, 10),
    )
    assert v.duplicate.number == 1
    assert "#2 is itself a duplicate of #1" in v.duplicate.reason
    cyc = validate(
        Decision(duplicate=Duplicate(number=4)), project_labels, tracker(), issue(10, 10)
    )
    assert cyc.duplicate.number in (4, 5)  # a cycle stops, it does not loop


def test_schema_lists_only_proposable_labels(project_labels):
    schema = answer_schema(project_labels)
    prio = schema["properties"]["priority"]["anyOf"][0]["enum"]
    assert prio == ["P1", "P2"]
    assert schema["properties"]["areas"]["maxItems"] == 2
    assert set(schema["required"]) >= {"type", "duplicate", "questions"}


def test_a_full_group_gets_nothing_more(project_labels):
    full = issue(10, 10, labels=["bug", "engine", "github"])
    v = validate(
        Decision(type="enhancement", areas=["index"], topics=["security"]),
        project_labels,
        None,
        full,
    )
    assert v.type is None and v.areas == []  # one type and max_areas = 2 already there
    assert v.topics == ["security"] and v.dropped == []
    partial = validate(
        Decision(areas=["index", "evaluate"]),
        project_labels,
        None,
        issue(10, 10, labels=["engine"]),
    )
    assert partial.areas == ["index"]


def test_schema_for_an_empty_group_has_no_empty_enum(hf_labels):
    schema = answer_schema(hf_labels)  # hf-datasets has no priority labels
    assert schema["properties"]["priority"] == {"type": "null"}
    text = str(schema)
    assert "'enum': []" not in text


def test_free_text_with_a_lone_surrogate_survives_the_comment_round_trip():
    # Found by test_pipeline_properties: "\ud800" is not valid Unicode, so the plan in the
    # comment (JSON) could not be read back and the approval would never find it.
    import json

    d = Decision(questions=["\ud800 which?"], summary="a\udc00b")
    assert d.questions == ["? which?"] and d.summary == "a?b"
    assert Decision.model_validate_json(json.dumps(d.model_dump(mode="json"))) == d


def test_a_label_in_another_casing_is_kept_in_the_toml_spelling():
    from issue_assistant.config.labels import LabelsConfig
    from issue_assistant.decision import filter_labels

    labels = LabelsConfig.model_validate({"type": [{"name": "bug"}], "area": [{"name": "CLI"}]})
    kept, dropped = filter_labels({"type": ["Bug"], "area": ["cli", "docs"]}, labels)
    assert kept["type"] == ["bug"] and kept["area"] == ["CLI"]
    assert dropped == ["docs"]
