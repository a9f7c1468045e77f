"""The learned label model: no leak, calibration, vote fallback, artifact, calibrate, report."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from issue_assistant.cli import main
from issue_assistant.config.labels import LabelsConfig, load_labels
from issue_assistant.config.sections import Config
from issue_assistant.engines import create
from issue_assistant.evaluate.report import render_report
from issue_assistant.evaluate.results import RunHeader
from issue_assistant.evaluate.runner import Evaluator
from issue_assistant.index.local import open_index
from issue_assistant.learn import store
from issue_assistant.learn.confidence import table_for
from issue_assistant.learn.model import fit
from issue_assistant.learn.rows import rows_from
from issue_assistant.pipeline import analyze
from issue_assistant.tracker.asof import AsOfView
from issue_assistant.tracker.models import Issue, Repository, User
from issue_assistant.tracker.snapshot import Snapshot, write_snapshot
from tests.moments import moment_of

T0 = datetime(2024, 1, 1, tzinfo=UTC)
LABELS = LabelsConfig.model_validate(
    {
        "type": [{"name": "bug"}, {"name": "enhancement"}],
        "area": [{"name": "cli"}, {"name": "docs"}],
    }
)
BUG = ["crash", "error", "traceback", "exception", "fails", "broken", "KeyError", "segfault"]
FEAT = ["please", "add", "support", "feature", "would", "like", "option", "allow"]
NOUNS = ["loader", "cache", "parser", "config", "index", "export", "import", "viewer"]


def synthetic(n: int, seed: int = 1) -> list[Issue]:
    """`n` issues an hour apart: bugs and features told apart by their words, some on the cli."""
    rnd = random.Random(seed)
    out = []
    for k in range(1, n + 1):
        kind = "bug" if k % 2 else "enhancement"
        words = BUG if kind == "bug" else FEAT
        noun = rnd.choice(NOUNS)
        title = f"{rnd.choice(words)} {noun} {rnd.choice(words)}"
        body = " ".join(rnd.choice(words + NOUNS) for _ in range(20))
        labels = [kind]
        if k % 3 == 0:
            labels.append("cli")
            body += " when running the command line tool"
        out.append(hourly(k, title, body, labels))
    return out


def hourly(k: int, title: str, body: str, labels: list[str]) -> Issue:
    """Closed issue `k`, opened `k` hours after T0."""
    return Issue(
        number=k,
        title=title,
        body=body,
        user=User(login=f"u{k}"),
        created_at=T0 + timedelta(hours=k),
        state="closed",
        closed_at=T0 + timedelta(hours=k, minutes=30),
        labels=labels,
    )


def snap(issues: list[Issue]) -> Snapshot:
    return Snapshot(Repository(full_name="o/r", fetched_at=T0 + timedelta(days=90)), issues)


def evaluator(snapshot: Snapshot, tmp_path: Path, cutoffs: list[datetime]) -> Evaluator:
    index = open_index(snapshot, tmp_path)
    return Evaluator(snapshot, index=index, labels=LABELS, config=Config(), cutoffs=cutoffs)


def test_no_later_issue_changes_an_earlier_answer(tmp_path):
    issues = synthetic(120)
    cutoff = issues[99].created_at
    first = evaluator(snap(issues), tmp_path / "a", [cutoff]).one(issues[104])
    assert first.decision.label_model["type"] == "learned"
    probs = first.decision.probabilities["type"]
    assert set(probs) == {"bug", "enhancement"}

    # Later issues relabelled the other way round, and many more added, all after the moment.
    later = [
        i.model_copy(update={"labels": ["enhancement" if "bug" in i.labels else "bug"]})
        if i.number > 105
        else i
        for i in issues
    ]
    later += [
        i.model_copy(
            update={
                "number": i.number + 500,
                "created_at": i.created_at + timedelta(days=30),
                "labels": ["bug"],
            }
        )
        for i in issues
    ]
    again = evaluator(snap(later), tmp_path / "b", [cutoff]).one(later[104])
    assert again.decision.probabilities == first.decision.probabilities
    assert again.decision.type == first.decision.type

    # An issue before the moment does change it: the test can fail.
    earlier = [
        i.model_copy(update={"labels": ["enhancement" if "bug" in i.labels else "bug"]})
        if i.number < 90
        else i
        for i in issues
    ]
    moved = evaluator(snap(earlier), tmp_path / "c", [cutoff]).one(earlier[104])
    assert moved.decision.probabilities != first.decision.probabilities


def test_bucket_model_is_fit_before_its_first_issue(tmp_path):
    issues = synthetic(120)
    ev = evaluator(
        snap(issues), tmp_path, store.bucket_cutoffs([i.created_at for i in issues[100:]], 10)
    )
    ev.one(issues[100])
    model = ev.label_fits.models[0]  # (the next bucket's may be fit ahead already)
    assert model.cutoff == issues[100].created_at
    assert model.issues == 100  # issues 1..100, not #101 itself


def test_calibration_chooses_the_lowest_threshold_reaching_the_target():
    # Confident answers are right, unsure ones are wrong half of the time.
    preds = [({"a": 0.95, "b": 0.05}, ["a"])] * 40
    preds += [({"a": 0.55, "b": 0.45}, ["a"]), ({"a": 0.55, "b": 0.45}, ["b"])] * 20
    table = table_for(preds, single=True, limit=1)
    chosen = table.choose(0.9)
    assert chosen is not None and 0.55 < chosen <= 0.95
    row = table.at(chosen)
    assert row.precision == 1.0 and row.coverage == pytest.approx(40 / 80)
    assert table.at(0.5).precision < 0.9  # lower would miss the target
    assert table.choose(1.01) is None


def test_learned_thresholds_meet_the_target_on_history():
    rows = rows_from(snap(synthetic(150)), LABELS, T0 + timedelta(days=30))
    model = fit(rows, LABELS, T0 + timedelta(days=30))
    table = model.groups["type"].table
    t = table.choose(0.9)
    assert t is not None and table.at(t).precision >= 0.9


def test_falls_back_to_the_vote_with_little_history(tmp_path):
    issues = synthetic(12)
    snapshot = snap(issues)
    ev = evaluator(snapshot, tmp_path, [issues[10].created_at])
    result = ev.one(issues[11])
    # Only the groups labels.toml configures (type and area) are answered, both by the vote.
    assert result.decision.label_model == {"type": "vote", "area": "vote"}
    assert result.decision.probabilities == {}
    model = fit(rows_from(snapshot, LABELS, issues[10].created_at), LABELS, issues[10].created_at)
    assert "only 10 labelled issues" in model.groups["type"].reason


def test_vote_when_configured(tmp_path):
    issues = synthetic(80)
    snapshot = snap(issues)
    index = open_index(snapshot, tmp_path)
    config = Config.model_validate({"labels": {"model": "vote"}})
    view = AsOfView.for_issue(snapshot, 80)
    d = analyze(
        moment_of(view, index, LABELS, config),
        view.target(),
        config=config,
        engine=create("similar", config, LABELS),
    ).decision
    assert d.label_model["type"] == "vote" and d.calibration.startswith("none")


def test_artifact_round_trip_version_check_and_refit_rule(tmp_path, monkeypatch):
    issues = synthetic(100)
    snapshot = snap(issues)
    index = open_index(snapshot, tmp_path)
    moment = issues[80].created_at
    view = AsOfView(snapshot, moment)
    model, refit = store.refit(view, index, LABELS, moment, replay=True)
    assert refit and store.model_path(index.path).is_file()
    key = store.labels_key(LABELS)
    loaded = store.load_model(index.path, key)
    assert loaded is not None and loaded.fingerprint == model.fingerprint
    doc = (issues[85].title, issues[85].body or "")
    assert loaded.probabilities_many([doc]) == model.probabilities_many([doc])

    # Nothing new: kept. Nine new labelled issues on 80 is more than 10%: refit.
    assert store.refit(view, index, LABELS, moment, replay=True)[1] is False
    assert (
        store.refit(
            AsOfView(snapshot, issues[85].created_at),
            index,
            LABELS,
            issues[85].created_at,
            replay=True,
        )[1]
        is False
    )
    later = issues[89].created_at
    assert store.refit(AsOfView(snapshot, later), index, LABELS, later, replay=True)[1] is True

    # Another label set, another format or a damaged file is never loaded.
    other = LABELS.model_copy(update={"area": []})
    assert store.load_model(index.path, store.labels_key(other)) is None
    monkeypatch.setattr(store.artifact, "FORMAT", 99)
    assert store.load_model(index.path, key) is None
    monkeypatch.undo()
    assert store.load_model(index.path, key) is not None
    path = store.model_path(index.path)
    path.write_bytes(path.read_bytes()[:1000])
    assert store.load_model(index.path, key) is None


def test_calibrate_end_to_end_on_a_snapshot(tmp_path, capsys):
    issues = synthetic(120)
    issues[110] = issues[110].model_copy(
        update={
            "duplicate_of": 50,
            "state_reason": "duplicate",
            "title": issues[49].title,
            "body": issues[49].body,
        }
    )
    path = tmp_path / "s.jsonl"
    write_snapshot(path, snap(issues).repository, issues)
    labels = tmp_path / "labels.toml"
    labels.write_text(
        '[[type]]\nname = "bug"\n[[type]]\nname = "enhancement"\n'
        '[[area]]\nname = "cli"\n[[area]]\nname = "docs"\n'
    )
    cache = tmp_path / "cache"
    code = main(
        ["calibrate", "--snapshot", str(path), "--labels", str(labels), "--cache-dir", str(cache)]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "[type] learned on" in out and "[duplicates] 1 known" in out
    # 120 labelled issues: too few to measure the tiers, and it says so.
    assert "confidence not yet measured (fewer than 150 out-of-fold predictions)" in out
    (written,) = cache.glob("index/*/calibration.json")
    data = json.loads(written.read_text())
    assert data["labels"]["type"]["model"] == "learned"
    assert data["labels"]["type"]["measured"] is False
    assert data["labels"]["type"]["method"] == "not measured"
    assert data["cutoff"].startswith("2024-03-31")
    assert data["labelled_issues"] == 120 and len(data["fingerprint"]) == 16
    assert (written.parent / "label-model.npz").is_file()


def test_report_has_the_label_measures(tmp_path, hf_snapshot):
    issues = synthetic(120)
    ev = evaluator(snap(issues), tmp_path, [issues[100].created_at])
    results = [ev.one(i, p) for p, i in enumerate(issues[100:])]
    header = RunHeader(repository="o/r", engine="similar", day=T0.date(), requested=20, selected=20)
    text = render_report(header, results)
    assert "## Labels per group" in text
    assert "| type | 20 |" in text and "learned 20" in text
    assert "### Type: per label" in text and "| `bug` |" in text
    assert "| Confidence ≥ | Coverage | Precision |" in text
    assert "Calibration used" in text and "out-of-fold precision" in text
    # plain English for a group whose name starts with a vowel
    assert "If the engine proposed an area label whenever" in text and "a area" not in text


def test_hf_labels_learned(hf_snapshot):
    labels = load_labels(Path(__file__).resolve().parents[1] / "bench" / "hf-datasets.labels.toml")
    cutoff = datetime(2021, 6, 1, tzinfo=UTC)
    rows = rows_from(AsOfView(hf_snapshot, cutoff), labels, cutoff)
    model = fit(rows, labels, cutoff, calibrate=False)
    assert model.mode("type") == "learned"
    assert {"bug", "enhancement", "dataset request"} <= set(model.groups["type"].classes)
    p = model.probabilities(hf_snapshot.get_issue(7016))["type"]
    assert abs(sum(p.values()) - 1) < 1e-6


def test_comment_says_how_confident_in_plain_words():
    from issue_assistant.comment import Plan, render_comment

    plan = Plan(
        repository="o/r",
        issue=3,
        reporter="u",
        created_at=T0,
        type="bug",
        areas=["cli", "docs"],
        confidence={"bug": 0.96, "cli": 0.75},
    )
    text = render_comment(plan)
    assert "**Proposed:** `bug` (very likely) · `cli` (likely) · `docs`\n\n" in text
    # the number behind each word is the engine's own, not measured: said in "Why" only
    why = text.split("<details><summary>Why</summary>")[1]
    assert "- `bug`: very likely, the engine's own confidence 0.96 (not measured).\n" in why
    assert "- `docs`: the engine gave no confidence.\n" in why
    assert "0.96" not in text.split("<details>")[0]


def test_labels_in_another_casing_are_learned(tmp_path):
    """Issues labelled `BUG` on GitHub train the `bug` of labels.toml."""
    issues = [i.model_copy(update={"labels": [n.upper() for n in i.labels]}) for i in synthetic(60)]
    rows = rows_from(snap(issues), LABELS, issues[-1].created_at)
    assert rows and all(r.labels <= {"bug", "enhancement", "cli"} for r in rows)
    model = fit(rows, LABELS, issues[-1].created_at, calibrate=False)
    assert model.mode("type") == "learned"


def test_report_lists_a_type_labels_own_bounds_beside_the_top_labels(tmp_path):
    """With enough history to measure, each type proposed often enough out of fold has its own
    row (what its proposals were held to), and the report says so."""
    issues = synthetic(200)
    ev = evaluator(snap(issues), tmp_path, [issues[180].created_at])
    results = [ev.one(i, p) for p, i in enumerate(issues[180:])]
    header = RunHeader(repository="o/r", engine="similar", day=T0.date(), requested=20, selected=20)
    text = render_report(header, results)
    bounds = text.split("Thresholds and tier bounds the engine used")[1].split("\n\n")[1]
    rows = [line.split(" | ")[0] for line in bounds.splitlines()[2:]]
    assert rows == ["| top label", "| `bug`", "| `enhancement`"]
    assert "a label's own row, where it was proposed often enough" in text
