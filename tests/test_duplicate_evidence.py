"""Duplicates a maintainer can check: the evidence quoted in the reason and the table, the
threshold's named source, "earlier" as of the issue's creation, and a tampered calibration."""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from issue_assistant.comment import (
    TABLE_ROWS,
    extract_plan,
    render_comment,
    similar_evidence,
    visible_part,
)
from issue_assistant.config.labels import LabelsConfig
from issue_assistant.config.sections import Config
from issue_assistant.engines import create
from issue_assistant.index.duplicates import SCORE_VERSION, PairFeatures
from issue_assistant.index.evidence import Shared, describe, shared, strongest, traits
from issue_assistant.index.local import open_index
from issue_assistant.index.traces import Wrappers, message_key, raised_from
from issue_assistant.learn.calibration_file import (
    CalibrationFile,
    DuplicateCalibration,
    read_calibration,
    write_calibration,
)
from issue_assistant.learn.duplicate_prior import load_prior
from issue_assistant.pipeline import replay
from issue_assistant.tracker.models import Issue, Repository, User
from issue_assistant.tracker.snapshot import Snapshot
from tests.markdown_check import problems
from tests.moments import settings_context

T0 = datetime(2024, 1, 1, tzinfo=UTC)
LABELS = LabelsConfig.model_validate({"type": [{"name": "bug"}, {"name": "enhancement"}]})

TRACEBACK = """Loading my config fails:

```
Traceback (most recent call last):
  File "app/main.py", line 3, in <module>
    run()
  File "issue_assistant/loader.py", line 88, in read_groups
    groups = parse(text)
  File "issue_assistant/groups.py", line 41, in merge_areas
    return areas["{name}"]
KeyError: 'areas' in group table @octocat http://evil.example/x <img src=x>
```
"""


def issue(number: int, title: str, body: str, minutes: float, state: str = "open") -> Issue:
    return Issue(
        number=number,
        title=title,
        body=body,
        user=User(login=f"user{number}"),
        created_at=T0 + timedelta(minutes=minutes),
        state=state,
        closed_at=T0 + timedelta(days=9) if state == "closed" else None,
        labels=[],
    )


FILLER = [
    issue(10 + k, f"Docs page {k} about {topic}", f"The {topic} page could say more about it.", k)
    for k, topic in enumerate(["themes", "plugins", "install", "colours", "fonts", "search"])
]


def tracker(*extra: Issue) -> Snapshot:
    repo = Repository(full_name="o/r", fetched_at=T0 + timedelta(days=30))
    original = issue(
        1, "Crash reading labels: KeyError in merge_areas", TRACEBACK.replace("{name}", "x"), -600
    )
    return Snapshot(repo, [original, *FILLER, *extra])


def analyzed(snap: Snapshot, number: int, tmp_path, config: Config | None = None):
    config = config or Config()
    index = open_index(snap, tmp_path)
    engine = create("similar", config, LABELS)
    return replay(snap, number, index=index, labels=LABELS, config=config, engine=engine)


# ---- what is read and shared ------------------------------------------------------------


def test_a_quoted_name_tells_errors_apart_and_a_quoted_file_or_value_does_not():
    """hf-datasets #7391's `module 'pyarrow.lib' has no attribute 'ListViewType'` is not the
    same error as #6881's about `'PIL.Image'` (the comment called it so); the same error about
    another file, or another path, still is."""
    arrow = message_key("AttributeError: module 'pyarrow.lib' has no attribute 'ListViewType'")
    pil = message_key("AttributeError: module 'PIL.Image' has no attribute 'ExifTags'")
    assert arrow and pil and arrow != pil
    assert arrow == message_key(
        'AttributeError: module "pyarrow.lib" has no attribute `ListViewType`'
    )
    assert message_key("FileNotFoundError: Unable to find 'train.json' in the data dir") == (
        message_key("FileNotFoundError: Unable to find 'test-00001.parquet' in the data dir")
    )
    assert message_key("NotADirectoryError: Not a directory: '/root/a/cn'") == message_key(
        "NotADirectoryError: Not a directory: '/home/b/x y'"
    )
    mine = traits(
        "pyarrow fails",
        "```\nAttributeError: module 'pyarrow.lib' has no attribute 'ListViewType'\n```",
    )
    theirs = traits(
        "PIL fails", "```\nAttributeError: module 'PIL.Image' has no attribute 'ExifTags'\n```"
    )
    assert shared(mine, theirs).errors == ()


def test_shared_evidence_is_what_both_have_in_the_new_issues_words():
    mine = traits("Crash reading labels: KeyError", TRACEBACK.replace("{name}", "y"))
    theirs = traits("KeyError in merge_areas", TRACEBACK.replace("{name}", "x"))
    found = shared(mine, theirs)
    assert found.errors and found.errors[0].startswith("KeyError: 'areas' in group table")
    assert found.frames[:2] == ("groups.py:merge_areas", "loader.py:read_groups")
    assert found.frame_overlap == 1.0
    assert "KeyError" in found.title_words
    assert not shared(mine, traits("The logo is blurry", "It looks bad on the docs site."))


def test_describe_quotes_each_piece_and_drops_the_weakest_to_fit():
    found = Shared(
        errors=("ValueError: `x` bad @octocat",),
        frames=("a.py:f", "b.py:g"),
        title_words=("slicing", "list"),
    )
    full = describe(found, 400)
    assert full.startswith("the same error ``ValueError: `x` bad @octocat``")
    assert "the same stack frames nearest the error `a.py:f`, `b.py:g`" in full
    assert full.endswith("the title words `slicing`, `list`")
    short = describe(found, 80)
    assert len(short) <= 80 and "the same error" in short and "title words" not in short
    assert describe(Shared(), 100) == ""


def test_strongest_names_one_piece_strongest_kind_first_title_words_last():
    full = Shared(
        errors=("ValueError: bad value for slice",),
        frames=("a.py:inner", "b.py:outer"),
        exceptions=("KeyError",),
        paths=("src/io.py",),
        identifiers=("load_rows",),
        title_words=("slicing", "list", "rows", "more"),
    )
    assert strongest(full) == "both fail with `ValueError: bad value for slice`"
    no_error = replace(full, errors=())
    assert strongest(no_error) == "both fail in the same code, `a.py:inner`"
    assert strongest(replace(no_error, frames=())) == "both fail with `KeyError`"
    assert strongest(Shared(exceptions=("FutureWarning",))) == (
        "both show the warning `FutureWarning`"
    )
    only_path = Shared(paths=("src/io.py",), identifiers=("load_rows",), title_words=("x", "y"))
    assert strongest(only_path) == "both name the file `src/io.py`"
    assert strongest(Shared(identifiers=("load_rows",), title_words=("a", "b"))) == (
        "both name `load_rows`"
    )
    # title words only when nothing else is shared, and a few of them
    assert strongest(Shared(title_words=("slicing", "list", "rows", "more"))) == (
        "their titles share the words `slicing`, `list`, `rows`"
    )
    assert strongest(Shared()) == ""
    # one code span, cut, whatever the error line holds
    long = strongest(Shared(errors=("E: " + "x" * 300 + " `tick`",)), 60)
    assert long.startswith("both fail with `E: xxx") and long.endswith("…`") and len(long) < 80


@pytest.mark.parametrize("shared", ["frames", "error"])
def test_evidence_shared_with_an_open_issue_counts_most(shared):
    """The same frames, or the same uncommon error, shared with an open candidate."""
    base = dict(dense=None, title=0.3, prose=0.3, signals=0.2, bm25_top=1.0, age=1.0)
    closed = PairFeatures(**base, open=0.0, **{shared: 1.0})
    opened = PairFeatures(**base, open=1.0, **{shared: 1.0, f"{shared}_open": 1.0})
    without = PairFeatures(**base, open=1.0)
    assert opened.score() > closed.score() and opened.score() > without.score()
    # the evidence adds more to an open candidate than the candidate's being open alone
    assert (
        opened.score() - without.score() > without.score() - PairFeatures(**base, open=0.0).score()
    )


# ---- the reason, the table and "earlier" ------------------------------------------------


def test_the_duplicate_reason_quotes_the_shared_evidence_sanitized(tmp_path):
    new = issue(
        30, "Crash reading labels: KeyError in merge_areas", TRACEBACK.replace("{name}", "y"), 60
    )
    config = Config.model_validate({"duplicates": {"threshold": 0.5}})
    result = analyzed(tracker(new), 30, tmp_path, config)
    dup = result.decision.duplicate
    assert dup is not None and dup.number == 1
    # the one strongest piece (the shared error line), never the whole list
    start = "Same problem as #1 (open): both fail with `KeyError: 'areas' in group table"
    assert dup.reason.startswith(start)
    assert "`groups.py:merge_areas`" not in dup.reason and "title words" not in dup.reason
    assert "duplicate score" not in dup.reason and "meaning 0." not in dup.reason
    body = result.comment
    assert problems(body, "o/r") == []  # no mention, outside link or raw HTML survives
    row = result.plan.evidence[0]
    assert row.number == 1 and row.relation == "duplicate" and "the same error" in row.shared
    # the full list stays in "Why" (the table), the visible line names one piece
    visible = visible_part(body)
    line = next(x for x in visible.splitlines() if x.startswith("**Possibly the same problem"))
    assert "both fail with `KeyError" in line and "merge_areas" not in line
    assert "`groups.py:merge_areas`" in row.shared


def test_a_duplicate_ranked_below_the_table_is_added_with_its_rank(tmp_path):
    """The duplicate line names one piece; all the two share is in the table, so the proposed
    duplicate is a row even when the search ranked it below the table's first rows."""
    new = issue(
        30, "Crash reading labels: KeyError in merge_areas", TRACEBACK.replace("{name}", "y"), 60
    )
    config = Config.model_validate({"duplicates": {"threshold": 0.5}})
    alike = [
        issue(40 + k, f"Crash {k} reading labels", f"Reading labels crashes with KeyError {k}.", k)
        for k in range(TABLE_ROWS + 1)
    ]
    result = analyzed(tracker(new, *alike), 30, tmp_path, config)
    context = result.context
    others = [c for c in context.candidates if c.issue.number != 1]
    [original] = [c for c in context.candidates if c.issue.number == 1]
    assert len(others) >= TABLE_ROWS + 1
    late = replace(context, candidates=[*others[: TABLE_ROWS + 1], original])
    rows = similar_evidence(late, 1, threshold=0.5, candidates=8)
    assert [e.number for e in rows[:TABLE_ROWS]] == [c.issue.number for c in others[:TABLE_ROWS]]
    assert [(e.number, e.rank, e.relation) for e in rows[TABLE_ROWS:]] == [
        (1, TABLE_ROWS + 2, "duplicate")
    ]
    assert "the same error" in rows[-1].shared and all(e.rank is None for e in rows[:-1])
    body = render_comment(result.plan.model_copy(update={"evidence": rows}))
    assert f"| {TABLE_ROWS + 2} | #1 |" in body and "| 1 | #" in body
    assert extract_plan(body).evidence == rows
    # ranked in the table: no rank kept (its place is its rank)
    assert all(e.rank is None for e in similar_evidence(context, 1, threshold=0.5, candidates=8))
    assert '"rank"' not in result.comment


def test_the_table_shows_rank_and_what_they_share_never_the_fusion_value(tmp_path):
    new = issue(30, "Docs page about themes and plugins", "The themes page could say more.", 60)
    result = analyzed(tracker(new), 30, tmp_path)
    body = render_comment(result.plan)
    assert "| Rank | Issue | Title | State | Labels | What they share |" in body
    assert "Score" not in body
    rows = [line for line in body.splitlines() if line.startswith("| 1 | #")]
    assert rows and "| the title words `Docs`, `page`" in rows[0]
    for e in result.plan.evidence:
        assert f"{e.score:.2f}" not in body.split("What they share")[1].split("</details>")[0]


def test_a_candidate_short_of_a_duplicate_is_possibly_related_not_the_duplicate(tmp_path):
    # the same crash, worded apart: shares the error and frames but stays under the threshold
    new = issue(30, "Something fails at start", TRACEBACK.replace("{name}", "y"), 60)
    config = Config.model_validate({"duplicates": {"threshold": 1.0}})
    result = analyzed(tracker(new), 30, tmp_path, config)
    assert result.decision.duplicate is None
    assert [e.relation for e in result.plan.evidence if e.number == 1] == ["related"]
    why = result.comment.split("<details><summary>Why</summary>")[1]
    assert "- Possibly related, not duplicates: #1 (what each shares is in the table below)" in why
    assert "Possibly the same problem" not in result.comment


def test_earlier_means_before_the_issue_was_opened(tmp_path):
    """An issue opened 30 seconds after this one (inside the minute of the replay) is never a
    candidate, a table row, a name in the comment, or a search tool's answer."""
    body = TRACEBACK.replace("{name}", "y")
    new = issue(30, "Crash reading labels: KeyError in merge_areas", body, 60)
    twin = issue(31, "Crash reading labels: KeyError in merge_areas", body, 60.5)
    result = analyzed(tracker(new, twin), 30, tmp_path)
    context = result.context
    assert context.as_of > twin.created_at > new.created_at  # the replay's moment is later
    assert 31 not in [c.issue.number for c in context.candidates]
    at = context.moment
    assert 31 not in [c.issue.number for c in at.like(context.issue)]
    assert 31 not in [c.issue.number for c in at.search("merge_areas KeyError", under=new)]
    assert 31 not in [e.number for e in result.plan.evidence]
    assert "#31" not in result.comment
    assert "| 1 | #1 |" in result.comment  # the table's first issue
    assert result.decision.candidates[0] == result.plan.evidence[0].number


# ---- where the threshold comes from ------------------------------------------------------


def test_the_threshold_source_is_named_never_fit_when_it_is_not(tmp_path):
    new = issue(30, "Docs page about themes", "The themes page could say more.", 60)
    snap = tracker(new)
    result = analyzed(snap, 30, tmp_path)
    d = result.decision
    prior = load_prior()
    assert d.duplicate_threshold_source == "prior"
    assert d.duplicate_threshold == round(prior.lexical.threshold, 3)
    assert f"the prior fit on the {prior.pairs} known duplicates of the shared data" in (
        d.calibration
    )
    assert "calibrated on" not in d.calibration
    configured = analyzed(
        snap, 30, tmp_path / "c", Config.model_validate({"duplicates": {"threshold": 0.7}})
    )
    assert configured.decision.duplicate_threshold_source == "config"
    assert "threshold 0.70 ([duplicates] threshold)" in configured.decision.calibration


def test_the_prior_is_valid_data_for_this_score():
    prior = load_prior()
    assert prior.score_version == SCORE_VERSION  # refit (bench/fit_duplicate_prior.py)
    assert prior.data == [
        "../shared/data/hf-datasets.jsonl.gz",
        "../shared/data/poetry-sample.jsonl.gz",
    ]
    assert 0 < prior.lexical.threshold <= 1 and prior.method


# ---- a tampered calibration.json ----------------------------------------------------------


def calibration_with(tmp_path, duplicates: object) -> None:
    good = CalibrationFile(
        repository="o/r",
        cutoff=T0,
        fingerprint="f" * 16,
        labelled_issues=0,
        target_precision=0.9,
        labels={},
        duplicates=DuplicateCalibration(
            target_precision=0.8,
            threshold=0.7,
            duplicates=30,
            negatives=200,
            positives_found=25,
            score_version=SCORE_VERSION,
        ),
    )
    write_calibration(good, tmp_path)
    path = tmp_path / "calibration.json"
    data = json.loads(path.read_text())
    data["duplicates"] = duplicates
    path.write_text(json.dumps(data))


GOOD = {
    "target_precision": 0.8,
    "threshold": 0.7,
    "duplicates": 30,
    "negatives": 200,
    "positives_found": 25,
    "score_version": SCORE_VERSION,
}


@pytest.mark.parametrize(
    "tampered",
    [
        {**GOOD, "model": "learned", "weights": {"title": 4.0, "prose": 1.0}},  # no bias
        {**GOOD, "threshold": -1},  # every issue a duplicate
        {**GOOD, "threshold": 0},
        {**GOOD, "threshold": "0.7"},  # wrong types
        {**GOOD, "duplicates": "many"},
        {**GOOD, "model": "learned", "weights": {"bias": "x", "title": 1.0}},
        {**GOOD, "model": "learned", "weights": {"bias": 1.0, "shoe_size": 1.0}},
        {**GOOD, "model": "learned", "weights": {"bias": 1e308 * 10, "title": 1.0}},
        [1, 2, 3],
        "duplicates",
    ],
)
def test_a_tampered_duplicate_calibration_is_logged_once_and_ignored(tmp_path, caplog, tampered):
    calibration_with(tmp_path, tampered)
    engine = create("similar", Config(), LABELS)
    context = settings_context(tmp_path)
    with caplog.at_level(logging.WARNING):
        settings = engine.duplicate_settings(context)
        cal = read_calibration(tmp_path)
    assert settings.source == "prior" and settings.weights is None
    assert settings.threshold == load_prior().lexical.threshold
    assert cal is not None and cal.duplicates is None  # the label part is still read
    lines = [r.getMessage() for r in caplog.records if "duplicates part ignored" in r.getMessage()]
    assert lines and all("\n" not in line for line in lines)


def test_a_valid_calibration_with_enough_pairs_is_named_as_calibrated(tmp_path):
    calibration_with(tmp_path, GOOD)
    engine = create("similar", Config(), LABELS)
    context = settings_context(tmp_path)
    settings = engine.duplicate_settings(context)
    assert (settings.source, settings.threshold) == ("calibrated", 0.7)
    assert "calibrated on this repository's 30 known duplicates" in settings.describe()
    # a hand-weighted threshold calibrated for an older score no longer applies
    calibration_with(tmp_path, {**GOOD, "score_version": SCORE_VERSION - 1})
    stale = engine.duplicate_settings(context)
    assert stale.source == "prior" and "older duplicate score" in stale.where


def test_pieces_most_earlier_issues_hold_are_not_named_as_evidence(tmp_path):
    """Rarity is counted on the issues before the moment's month: a name in most of them
    (`load_config` here) is dropped from what is quoted, a rare one (`merge_areas`) kept."""
    from issue_assistant.index.evidence import MIN_SPECIFIC, Rarity

    old = [
        issue(100 + k, f"Report {k}", f"calling load_config fails on page {k}", -40 * 24 * 60 + k)
        for k in range(30)
    ]
    old += [issue(200, "merge_areas breaks", "merge_areas raises", -40 * 24 * 60 + 50)]
    later = issue(201, "merge_areas again", "merge_areas raises", 10)  # this month: not counted
    repo = Repository(full_name="o/r", fetched_at=T0 + timedelta(days=30))
    index = open_index(Snapshot(repo, [*old, later]), tmp_path)
    rarity = Rarity(index, T0 + timedelta(days=3))
    assert rarity.total == 31
    assert rarity.piece("load_config") < MIN_SPECIFIC <= rarity.piece("merge_areas")
    found = Shared(identifiers=("load_config", "merge_areas"), title_words=("Report",))
    kept = found.specific(rarity)
    assert kept.identifiers == ("merge_areas",) and kept.title_words == ()


def test_rarity_counts_the_issues_holding_every_word_or_the_phrase(tmp_path):
    """A piece of several words is as rare as the issues holding all of them (an error
    message's words) or their phrase (a name's): the issues holding any one word do not count,
    or every multi-word error and name would read as common."""
    from issue_assistant.index.evidence import MIN_SPECIFIC, Rarity

    old = [
        issue(100 + k, f"Report {k}", f"the slice of examples on page {k} is wrong", -60 * 24 * 60)
        for k in range(30)
    ]
    old.append(issue(200, "Bad slice", "Requested slice incompatible with examples", -59 * 24 * 60))
    repo = Repository(full_name="o/r", fetched_at=T0 + timedelta(days=30))
    index = open_index(Snapshot(repo, old), tmp_path)
    rarity = Rarity(index, T0 + timedelta(days=3))
    before = rarity.before
    assert index.issues_with(("slice", "examples"), before, phrase=False) == 31
    assert index.issues_with(("requested", "slice", "examples"), before, phrase=False) == 1
    assert index.issues_with(("slice", "examples"), before, phrase=True) == 0  # never adjacent
    assert index.issues_with(("slice", "of", "examples"), before, phrase=True) == 30
    assert index.issues_with(("nowhere", "examples"), before, phrase=False) == 0
    key = message_key("ValueError: Requested slice [:9] incompatible with 60000 examples.")
    assert rarity.message(key) > 0.75 > MIN_SPECIFIC > rarity.piece("slice")


CHAINED = """Traceback (most recent call last):
  File "builder.py", line 1973, in _prepare_split_single
    for _, table in generator:
ImportError: Using URI string without sqlalchemy installed.

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "builder.py", line 2004, in _prepare_split_single
    raise DatasetGenerationError("An error occurred while generating the dataset") from e
datasets.exceptions.DatasetGenerationError: An error occurred while generating the dataset
"""


def test_an_error_raised_from_another_is_a_wrapper_and_its_cause_is_kept():
    """hf-datasets #5240: every report that reaches the builder ends in the same wrapper
    (`DatasetGenerationError: An error occurred while generating the dataset`, 30 of the shared
    data's chained tracebacks); what two reports share is their cause, not it."""
    wrapper = "an error occurred while generating the dataset"
    assert raised_from(CHAINED).messages == {wrapper}
    assert raised_from(CHAINED).exceptions == {"datasetgenerationerror"}
    read = traits("Loading from SQL fails", CHAINED)
    assert set(read.errors) == {"using uri string without sqlalchemy installed"}
    assert set(read.exceptions) == {"importerror"}
    # the same wrapper alone, with no cause shown, is the only error there is: kept
    alone = CHAINED.split("The above")[1].split("\n", 2)[2]
    assert raised_from(alone) == Wrappers() and wrapper in traits("t", alone).errors
    assert "datasetgenerationerror" in traits("t", alone).exceptions
    # shown once as a wrapper and once on its own: kept
    assert raised_from(CHAINED + "\nAnd then:\n" + alone).messages == set()
    # a chain of three: both errors raised from another are wrappers, the first is the cause
    three = CHAINED + (
        "\nThe above exception was the direct cause of the following exception:\n\n"
        'Traceback (most recent call last):\n  File "load.py", line 9, in load_dataset\n'
        "RuntimeError: Loading the split failed here\n"
    )
    assert raised_from(three).messages == {wrapper, "loading the split failed here"}
    assert set(traits("t", three).errors) == {"using uri string without sqlalchemy installed"}
    # "During handling of the above exception": the second error is not the first's wrapper
    handled = CHAINED.replace(
        "The above exception was the direct cause of the following exception:",
        "During handling of the above exception, another exception occurred:",
    )
    assert raised_from(handled) == Wrappers() and len(traits("t", handled).errors) == 2
    other = CHAINED.replace("Using URI string without sqlalchemy installed", "Disk quota hit now")
    assert not shared(traits("a", CHAINED), traits("b", other)).errors


def test_an_error_an_earlier_issue_shows_raised_from_another_is_no_evidence(tmp_path):
    """Two reports that pasted only the last line share the wrapper and nothing else: an
    earlier issue whose traceback shows it raised from another error tells it is one, so it
    is neither quoted nor counted (its rarity 0); a later issue is not read for it."""
    from issue_assistant.index.evidence import Rarity

    days = -60 * 24 * 60
    alone = CHAINED.split("The above")[1].split("\n", 2)[2]
    old = [issue(100 + k, f"Report {k}", f"page {k} is wrong", days) for k in range(30)]
    old.append(issue(200, "SQL loading fails", CHAINED, days))
    later = issue(300, "Parquet fails", CHAINED.replace("Using URI", "Bad footer"), 10)
    repo = Repository(full_name="o/r", fetched_at=T0 + timedelta(days=30))
    index = open_index(Snapshot(repo, [*old, later]), tmp_path)
    wrapper = message_key("DatasetGenerationError: An error occurred while generating the dataset")
    words = tuple(wrapper.split())
    both = shared(traits("Loading fails", alone), traits("Reading fails", alone))
    assert both.error_keys == (wrapper,)
    rarity = Rarity(index, T0 + timedelta(days=3))
    assert rarity.wrapper(wrapper) and rarity.message(wrapper) == 0.0
    kept = both.specific(rarity)
    assert kept.errors == () and kept.error_keys == () and not kept.exceptions
    assert "DatasetGenerationError" in " ".join(both.identifiers)  # the wrapper's class
    assert describe(kept, 500) == "the files `builder.py`; the title words `fails`"
    cause = message_key("ImportError: Using URI string without sqlalchemy installed.")
    assert not rarity.wrapper(cause) and rarity.message(cause) > 0.5
    # before the chained report, nothing tells the wrapper from a specific error
    earlier = Rarity(index, T0 - timedelta(days=70))
    assert not earlier.wrapper(wrapper)
    assert index.bodies_with(words, ("direct", "cause"), earlier.before, 20) == []
    assert len(index.bodies_with(words, ("direct", "cause"), rarity.before, 20)) == 1


def test_an_error_line_is_quoted_without_a_glued_fence_or_its_emphasis():
    body = "_UnicodeDecodeError: 'utf-8' codec can't decode byte 0x8b in position 1_\n"
    body += "```\nValueError: Requested slice [:10] incompatible with 20 examples.```\n"
    body += "_pickle.PicklingError: Can't pickle the local object here\n"
    assert list(traits("t", body).errors.values()) == [
        "UnicodeDecodeError: 'utf-8' codec can't decode byte 0x8b in position 1",
        "ValueError: Requested slice [:10] incompatible with 20 examples.",
        "_pickle.PicklingError: Can't pickle the local object here",
    ]


def test_what_both_titles_and_bodies_are_about_is_the_subject():
    """Uncommon title words both titles and both bodies use: the subject, quoted once (not
    again as title words); one such word is no subject."""
    mine = traits(
        "Support cloud storage for loading datasets",
        "Cloud storage works only for `load_from_disk`; please support it when loading too.",
    )
    theirs = traits(
        "Support cloud storage in load_dataset",
        "Would be nice to read data files from any cloud storage path (s3://...).",
    )
    found = shared(mine, theirs)
    assert found.topic == ("cloud", "storage") == found.subject  # `Support`: not in their body
    text = describe(found, 300)
    assert "the subject `cloud`, `storage` in both titles and descriptions" in text
    assert "the title words `Support`" in text and text.count("`cloud`") == 1  # named once
    assert strongest(found).startswith("both titles and descriptions are about `")
    # one word in common in both titles and bodies: title words, no subject
    video = shared(
        traits("Support Video", "Will be great to see such a support in videos."),
        traits("Add video feature", "Add a `Video` feature so folks can include videos."),
    )
    assert video.topic == ("Video",) and video.subject == ()
    assert strongest(video) == "their titles share the words `Video`"
    # titles that say different things: no subject, however many words they share
    jit, gc = (
        traits(f"Clean dead code in the {x}", f"The {x} keeps dead code; clean it up.")
        for x in ("JIT", "GC")
    )
    sibling = shared(jit, gc)
    assert set(sibling.topic) >= {"Clean", "dead"} and set(sibling.title_apart) == {"JIT", "GC"}
    assert sibling.subject == () and "the subject" not in describe(sibling, 300)


@pytest.mark.parametrize(
    ("text", "ids"),
    [
        ("Dataset Viewer issue for Yaxin/SemEval2015", ["Yaxin/SemEval2015"]),
        (
            "load allenai/c4, then lvwerra/stack-exchange-paired",
            ["allenai/c4", "lvwerra/stack-exchange-paired"],
        ),
        ("image/audio and/or ImageFolder/AudioFolder, I/O", []),  # prose
        ("see https://huggingface.co/datasets/allenai/c4", []),  # a URL
        ("the file data/train-00.parquet and src/a/b-1", []),  # files and paths
        ("works on py3.10/3.11", []),  # versions
    ],
)
def test_a_repository_or_dataset_id_is_a_name(text, ids):
    found = traits(text, "").identifiers
    assert [v for k, v in found.items() if "/" in k] == ids
