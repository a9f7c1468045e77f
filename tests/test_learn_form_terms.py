"""The headings of an issue's template or form as terms (`learn/form_terms.py`): what they read on
real bodies of the shared data, and what the type model learns from them."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from issue_assistant.config.labels import load_labels
from issue_assistant.learn import artifact, features, store
from issue_assistant.learn.form_terms import MAX_COMMENTS, comment_terms, form_terms
from issue_assistant.learn.model import fit
from issue_assistant.learn.rows import rows_from
from issue_assistant.tracker.snapshot import read_snapshot
from tests.test_learn_cues import _fit

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
HF, POETRY = DATA / "hf-datasets.jsonl.gz", DATA / "poetry-sample.jsonl.gz"
LABELS = ROOT / "bench" / "hf-datasets.labels.toml"
PLAIN = tuple(s for s in features.SPECS if s.analyzer not in ("form", "comments"))
NO_COMMENTS = tuple(s for s in features.SPECS if s.analyzer != "comments")
needs_data = pytest.mark.skipif(not HF.exists(), reason="the shared data is not here")


@pytest.fixture(scope="module")
def bodies():
    out = {}
    for name, path in (("hf", HF), ("poetry", POETRY)):
        for issue in read_snapshot(path).all_issues():
            out[name, issue.number] = issue.body or ""
    return out


@needs_data
@pytest.mark.parametrize(
    ("repo", "number", "terms"),
    [
        # a Markdown template's `##` headings (2021)
        (
            "hf",
            2239,
            [
                "h_describe_the_bug",
                "h_steps_to_reproduce_the_bug",
                "h_expected_results",
                "h_actual_results",
                "h_versions",
            ],
        ),
        # a template's headings in bold lines, the one left out of the body absent
        (
            "hf",
            2271,
            ["h_is_your_feature_request_related_to", "h_describe_the_solution_you_d_like"],
        ),
        # an issue form's feature request
        ("hf", 4694, ["h_feature_request", "h_motivation", "h_your_contribution"]),
        # an issue form's bug report: its "Reproduction" field left empty gives no term
        ("hf", 5690, ["h_describe_the_bug", "h_logs", "h_system_info"]),
        # poetry's feature form: its dropdown's answer gives no term, its heading does
        ("poetry", 10113, ["h_issue_kind", "h_description", "h_impact", "h_workarounds"]),
        # a body of prose and a traceback in a fence: no heading, no term
        ("hf", 6, []),
        # the bug form's headings, and the hint its environment field leaves in a comment
        (
            "hf",
            2388,
            [
                "h_describe_the_bug",
                "h_steps_to_reproduce_the_bug",
                "h_expected_results",
                "h_actual_results",
                "h_environment_info",
                "m_you_can_run_the_command_datasets",
            ],
        ),
    ],
)
def test_a_body_says_the_headings_of_its_template_or_form(bodies, repo, number, terms):
    assert form_terms(bodies[repo, number]) == terms


@needs_data
def test_the_measured_variants_read_empty_fields_and_dropdown_answers(bodies):
    assert "e_reproduction" in form_terms(bodies["hf", 5690], empty="mark")
    assert "h_reproduction" in form_terms(bodies["hf", 5690], empty="same")
    chosen = form_terms(bodies["poetry", 10113], choices=True)
    assert "c_issue_kind__brand_new_capability" in chosen


def test_a_heading_inside_a_code_fence_or_a_title_heading_is_no_term():
    assert form_terms("I ran this:\n```\n### not a heading\n## nor this\n```\nand it failed") == []
    assert form_terms("# a comment line of pasted code\nx = 1") == []
    assert form_terms(None) == [] and form_terms("") == []


# opencv/opencv's Markdown template, written in `#####` headings
OPENCV = (
    "<!--\nIf you have a question rather than reporting a bug please go to the forum.\n-->\n\n"
    "##### System information (version)\n- OpenCV => 4.5\n- Operating System / Platform => "
    "Windows 64 Bit\n\n##### Detailed description\n\nimread returns an empty Mat\n\n"
    "##### Steps to reproduce\n\n<!-- to add code example fence it with triple backticks -->\n"
)


def test_a_templates_fifth_level_headings_are_terms_and_its_empty_field_none():
    assert form_terms(OPENCV, comments=False) == [
        "h_system_information_version",
        "h_detailed_description",
    ]
    assert form_terms("####### seven is no heading\ntext") == []


# microsoft/vscode's two Markdown templates: no heading, each names itself in a comment
VSCODE_BUG = (
    "<!-- ⚠️⚠️ Do Not Delete This! bug_report_template ⚠️⚠️ -->\n"
    "<!-- Please read our Rules of Conduct: https://opensource.microsoft.com/codeofconduct/ -->\n"
    "Does this issue occur when all extensions are disabled?: Yes\n"
)
VSCODE_FEATURE = (
    "<!-- ⚠️⚠️ Do Not Delete This! feature_request_template ⚠️⚠️ -->\n"
    "<!-- Please read our Rules of Conduct: https://opensource.microsoft.com/codeofconduct/ -->\n"
    "<!-- Describe the feature you'd like. -->\n"
)


def test_a_templates_comments_are_terms_of_their_first_words():
    assert form_terms(VSCODE_FEATURE) == [
        "m_do_not_delete_this_feature_request",
        "m_please_read_our_rules_of_conduct",
        "m_describe_the_feature_you_d_like",
    ]
    assert comment_terms(VSCODE_BUG)[0] == "m_do_not_delete_this_bug_report"
    assert form_terms(VSCODE_BUG, comments=False) == []
    # once each; none inside code; one left open runs to the end; none of numbers alone
    body = "<!-- a -->\n```html\n<!-- in code -->\n```\n<!-- a -->\n<!-- 42 -->\n<!-- open"
    assert comment_terms(body) == ["m_a", "m_open"]
    many = "".join(f"<!-- note {chr(97 + i)} -->" for i in range(20))
    assert len(comment_terms(many)) == MAX_COMMENTS
    assert comment_terms("no comment") == [] and comment_terms(None) == []


def test_a_history_without_form_terms_has_no_block_and_one_with_them_has_it():
    plain = [("Crash on load", "Traceback", ""), ("Add an option", "It would be nice", "")] * 3
    assert "form_terms" not in [p.spec.name for p in features.fit_features(plain).parts]
    formed = [
        *plain,
        ("Crash", "x", "h_describe_the_bug h_steps_to_reproduce_the_bug"),
        ("Option", "y", "h_feature_request h_motivation"),
    ]
    feats = features.fit_features(formed)
    (part,) = [p for p in feats.parts if p.spec.analyzer == "form"]
    assert sorted(part.text_part().vocabulary) == [
        "h_describe_the_bug",
        "h_feature_request",
        "h_motivation",
        "h_steps_to_reproduce_the_bug",
    ]
    x = feats.matrix(formed).toarray()
    block = x[:, feats.width - 4 :]
    assert (block[:6] == 0).all() and (block[6] > 0).sum() == 2 and (block[7] > 0).sum() == 2


@pytest.fixture(scope="module")
def history():
    """hf-datasets' 300 labelled issues before its newest 200 bug or enhancement reports, and
    those 200 with their type."""
    labels = load_labels(LABELS)
    snapshot = read_snapshot(HF)
    rows = rows_from(snapshot, labels, snapshot.repository.fetched_at)
    kinds = {"bug", "enhancement"}
    two = [(r, t) for r in rows for t in r.labels & kinds if len(r.labels & kinds) == 1]
    scored = two[-200:]
    train = [r for r in rows if r.created_at < scored[0][0].created_at][-300:]
    return labels, train, scored


BUG_FORM = "h_describe_the_bug h_steps_to_reproduce_the_bug h_expected_behavior h_environment_info"


@needs_data
def test_the_bug_forms_headings_move_a_report_towards_bug(history):
    """Later feature requests written with the feature form, their form terms swapped for the bug
    form's: the model with the block moves them towards bug; the one without it cannot tell."""
    _, train, scored = history
    assert sum("h_describe_the_bug" in r.form for r in train) >= 20
    asked = [r.doc for r, t in scored if t == "enhancement" and "h_feature_request" in r.form]
    asked = asked[:60]
    assert len(asked) == 60
    swapped = [(t, p, BUG_FORM) for t, p, _ in asked]

    def rise(m):  # noqa: ANN001, ANN202
        before = [p["type"] for p in m.probabilities_many(asked)]
        after = [p["type"] for p in m.probabilities_many(swapped)]
        return [a["bug"] / b["bug"] for a, b in zip(after, before, strict=True)]

    with_form, without_form = rise(_fit(history, NO_COMMENTS)), rise(_fit(history, PLAIN))
    assert all(r == pytest.approx(1.0) for r in without_form)
    assert sum(with_form) / len(with_form) > 3 and min(with_form) > 1.5, with_form


@needs_data
def test_a_templates_comment_moves_a_report_towards_its_type(history):
    """A history written with vscode's templates, which have no headings: each bug report
    carries the bug template's comments, each feature request the feature template's. Later
    feature requests given the bug template's comments instead: the model with the comments'
    block moves them towards bug; without it, the comments are read nowhere (the prose drops
    them) and nothing moves."""
    labels, train, scored = history
    note = {"bug": comment_terms(VSCODE_BUG), "enhancement": comment_terms(VSCODE_FEATURE)}

    def written(row, kind):  # noqa: ANN001, ANN202
        return dataclasses.replace(row, form=" ".join([row.form, *note.get(kind, [])]))

    kinds = [next(iter(r.labels & note.keys()), None) for r in train]
    vscode = (labels, [written(r, k) for r, k in zip(train, kinds, strict=True)], scored)
    asked = [written(r, "enhancement").doc for r, t in scored if t == "enhancement"][:60]
    feature, bug = " ".join(note["enhancement"]), " ".join(note["bug"])
    swapped = [(t, p, f.replace(feature, bug)) for t, p, f in asked]
    assert all(feature in f and bug not in f for _, _, f in asked)

    def rise(m):  # noqa: ANN001, ANN202
        before = [p["type"] for p in m.probabilities_many(asked)]
        after = [p["type"] for p in m.probabilities_many(swapped)]
        return [a["bug"] / b["bug"] for a, b in zip(after, before, strict=True)]

    with_block, without = rise(_fit(vscode, features.SPECS)), rise(_fit(vscode, NO_COMMENTS))
    assert all(r == pytest.approx(1.0) for r in without)
    assert sum(with_block) / len(with_block) > 5 and min(with_block) > 2, with_block


@needs_data
def test_a_saved_model_keeps_the_form_block(tmp_path):
    """poetry-sample's history, every report written with a form: the blocks of its headings and
    its comments are fit, saved and read back, and the loaded model reads a new body's headings
    and comments as the fit did."""
    labels = load_labels(ROOT / "tests" / "data" / "evaluate" / "poetry.labels.toml")
    snapshot = read_snapshot(POETRY)
    rows = rows_from(snapshot, labels, snapshot.repository.fetched_at)
    m = fit(rows[:70], labels, rows[70].created_at, calibrate=False)
    assert "form_terms" in [p.spec.name for p in m.featurizer.fitted.parts]
    _, loaded = artifact.read(store.save_model(m, tmp_path, "key"))
    assert loaded is not None
    (part,) = [p for p in loaded.featurizer.parts if p.analyzer == "form"]
    assert part.column == 2 and "h_issue_kind" in part.vocabulary
    assert not any(t.startswith("m_") for t in part.vocabulary)
    (comments,) = [p for p in loaded.featurizer.parts if p.analyzer == "comments"]
    assert comments.column == 2 and "m_please_leave_one_blank_line_below" in comments.vocabulary
    docs = [r.doc for r in rows[70:]]
    assert loaded.probabilities_many(docs) == m.probabilities_many(docs)
