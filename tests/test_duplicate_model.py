"""The duplicate score fit on a repository's own known pairs, and its threshold."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from issue_assistant.cli import main
from issue_assistant.index.duplicates import PairFeatures
from issue_assistant.index.evidence import Shared
from issue_assistant.learn import duplicate_model as dm
from issue_assistant.tracker.snapshot import write_snapshot
from tests.moments import moment_of, replayer, settings_context
from tests.test_learn import LABELS, snap, synthetic

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def pair(rnd: random.Random, same: bool) -> PairFeatures:
    """Look-alike pairs: the original shares its title words; strangers share the template's
    prose and frames (what the hand weights count as evidence)."""
    return PairFeatures(
        dense=None,
        title=rnd.uniform(0.5, 1.0) if same else rnd.uniform(0.0, 0.4),
        prose=rnd.uniform(0.6, 1.0),  # every report fills the same form: prose says nothing
        # every report carries the same stack frames; an original shares fewer of them
        signals=rnd.uniform(0.0, 0.5) if same else rnd.uniform(0.5, 1.0),
        bm25_top=1.0 if same else rnd.uniform(0.3, 1.0),
        open=float(rnd.random() < 0.5),
        age=rnd.uniform(0, 2),
        # the form's field name, which every pair shares: evidence enough to be claimed at all
        evidence=Shared(identifiers=("dataset_name",)),
    )


def replayed(n_dups: int, n_other: int, seed: int = 5) -> list[dm.Replayed]:
    rnd = random.Random(seed)
    out = []
    for k in range(n_dups + n_other):
        dup = k % ((n_dups + n_other) // max(n_dups, 1)) == 0 and k // 2 < n_dups * 2
        pairs = [(1000 + k, pair(rnd, dup))] + [
            (2000 + k * 10 + j, pair(rnd, False)) for j in range(4)
        ]
        accept = frozenset({1000 + k}) if dup else frozenset()
        out.append(dm.Replayed(T0 + timedelta(hours=k), dup, tuple(pairs), accept))
    return out


def test_weights_are_fit_with_enough_known_pairs_and_beat_the_hand_weights():
    data = replayed(60, 240)
    assert sum(r.duplicate for r in data) >= dm.MIN_POSITIVES
    outcomes, weights = dm.cross_validated(data, learn=True)
    assert weights is not None and set(weights) == {"bias", *dm.LEXICAL_KEYS}
    # the fit learns what this repository's pairs say: titles decide, the shared form does not
    assert weights["title"] > 2 * abs(weights["prose"])
    hand, none = dm.cross_validated(data, learn=False)
    assert none is None

    def right_at_target(outs):
        rows, chosen = dm.choose_threshold(outs, 0.9, 60, 0.05)
        return next((c for t, _, c, _ in rows if t == chosen), 0)

    # at the threshold each chooses for precision 0.9, the fit finds more of the duplicates
    assert right_at_target(outcomes) > right_at_target(hand)


def test_too_few_known_pairs_keep_the_hand_weights():
    data = replayed(5, 100)
    outcomes, weights = dm.cross_validated(data, learn=True)
    assert weights is None and len(outcomes) == len(data)


def test_threshold_is_the_lowest_reaching_the_target():
    right = dm.Outcome(((1, 0.95), (2, 0.1)), True, frozenset({1}))
    stranger = dm.Outcome(((3, 0.6),), False, frozenset())
    outs = [right] * 6 + [stranger] * 4
    rows, chosen = dm.choose_threshold(outs, 0.9, 6, 0.05)
    assert chosen == min(t for t, p, c, _ in rows if p >= 5 and c / p >= 0.9)
    assert chosen > 0.6


def test_calibrate_fits_weights_and_analyze_uses_them(tmp_path, capsys):
    issues = synthetic(160)
    for k in range(100, 160, 2):  # 30 duplicates, each a reworded copy of an older issue
        token = "".join(random.Random(k).choices("bcdfghjklmnpqrstvwxz", k=9))
        src = issues[k - 90] = issues[k - 90].model_copy(
            update={
                "title": f"{issues[k - 90].title} {token}",
                "body": f"{issues[k - 90].body} {token}",
            }
        )
        issues[k] = issues[k].model_copy(
            update={
                "duplicate_of": src.number,
                "state_reason": "duplicate",
                "title": src.title + " again",
                "body": src.body,
            }
        )
    path = tmp_path / "s.jsonl"
    write_snapshot(path, snap(issues).repository, issues)
    labels = tmp_path / "labels.toml"
    labels.write_text('[[type]]\nname = "bug"\n[[type]]\nname = "enhancement"\n')
    cache = tmp_path / "cache"
    args = ["--snapshot", str(path), "--labels", str(labels), "--cache-dir", str(cache)]
    assert main(["calibrate", *args]) == 0
    out = capsys.readouterr().out
    assert "weights fit on this repository's" in out
    (written,) = cache.glob("index/*/calibration.json")
    dup = json.loads(written.read_text())["duplicates"]
    assert dup["model"] == "learned" and set(dup["weights"]) >= {"bias", "title", "prose"}

    from issue_assistant.config.labels import LabelsConfig
    from issue_assistant.config.sections import Config
    from issue_assistant.engines import create
    from issue_assistant.index.local import open_index
    from issue_assistant.pipeline import analyze
    from issue_assistant.tracker.asof import AsOfView

    snapshot = snap(issues)
    index = open_index(snapshot, cache)
    lab = LabelsConfig.model_validate({"type": [{"name": "bug"}, {"name": "enhancement"}]})
    engine = create("similar", Config(), lab)
    view = AsOfView.for_issue(snapshot, issues[150].number)
    ctx_decision = analyze(
        moment_of(view, index, lab, Config()),
        view.target(),
        config=Config(),
        engine=engine,
    )
    assert engine.duplicate_weights(ctx_decision.context) == dup["weights"]


def test_evaluate_fits_duplicates_per_bucket_on_what_was_known_then(tmp_path):
    """A duplicate closed after a cutoff is not part of that cutoff's fit."""
    from issue_assistant.config.sections import Config
    from issue_assistant.index.local import open_index

    issues = synthetic(160)
    for k in range(40, 160, 4):
        src = issues[k - 30]
        issues[k] = issues[k].model_copy(
            update={
                "duplicate_of": src.number,
                "state_reason": "duplicate",
                "title": src.title,
                "body": src.body,
            }
        )
    snapshot = snap(issues)
    index = open_index(snapshot, tmp_path)
    early, late = issues[80].created_at, issues[150].created_at
    buckets = dm.BucketDuplicates(
        snapshot, index, LABELS, Config(), [early, late], replayer(snapshot, index, LABELS), {}
    )
    known_early = buckets.for_moment(issues[100].created_at).known
    known_late = buckets.for_moment(issues[155].created_at).known
    closed_before = sum(1 for i in issues if i.duplicate_of and i.closed_at < early)
    assert known_early == closed_before < known_late
    assert buckets.for_moment(issues[10].created_at) == dm.BucketFit()  # before any cutoff
    # each issue is replayed once, at its own moment, and the early ones serve both cutoffs
    used_late = [i for i in buckets._dups + buckets._others if i.closed_at < late]
    assert sorted(buckets._replays) == sorted(i.number for i in used_late)
    replay = buckets._replays[used_late[0].number]
    assert replay.created_at == used_late[0].created_at


def test_a_cutoff_with_too_few_known_duplicates_replays_nothing(tmp_path):
    """Fewer known duplicates than a threshold needs: the hand weights and the prior answer
    whatever the replays would say, so none is made (evaluate's cost on a small tracker)."""
    from issue_assistant.config.sections import Config
    from issue_assistant.index.local import open_index

    issues = synthetic(160)
    for k in (60, 90, 120):
        issues[k] = issues[k].model_copy(
            update={"duplicate_of": issues[k - 30].number, "state_reason": "duplicate"}
        )
    snapshot = snap(issues)
    index = open_index(snapshot, tmp_path)
    calls: list[int] = []

    replay = replayer(snapshot, index, LABELS)

    def counting(issue):  # noqa: ANN001, ANN202
        calls.append(issue.number)
        return replay(issue)

    late = issues[150].created_at
    buckets = dm.BucketDuplicates(snapshot, index, LABELS, Config(), [late], counting, {})
    known = sum(1 for i in issues if i.duplicate_of and i.closed_at < late)
    assert 0 < known < dm.MIN_CALIBRATION_PAIRS
    fit = buckets.for_moment(issues[155].created_at)
    assert fit == dm.BucketFit(known=known) and calls == []
    assert fit.why == (
        f"{known} known duplicates closed before this bucket's cutoff: too few to calibrate "
        "on (10 with their original found are needed)"
    )


def test_duplicate_weights_fit_ahead_newest_first_answer_as_fit_on_demand(tmp_path, monkeypatch):
    """evaluate's duplicate fits made ahead in a thread, in the order the issues ask for them,
    are each made once and are the fits an issue would have made itself."""
    import time

    from issue_assistant.config.sections import Config
    from issue_assistant.index.local import open_index

    issues = synthetic(160)
    for k in range(40, 160, 4):
        src = issues[k - 30]
        issues[k] = issues[k].model_copy(
            update={"duplicate_of": src.number, "state_reason": "duplicate", "title": src.title}
        )
    snapshot = snap(issues)
    index = open_index(snapshot, tmp_path)
    cutoffs = [issues[k].created_at for k in (80, 120, 150)]
    replay = replayer(snapshot, index, LABELS)
    ahead = dm.BucketDuplicates(snapshot, index, LABELS, Config(), cutoffs, replay, {})
    fitted: list[datetime] = []
    real = ahead._fit

    def recording(cutoff):  # noqa: ANN001, ANN202
        if cutoff not in ahead._fits:
            fitted.append(cutoff)
        return real(cutoff)

    monkeypatch.setattr(ahead, "_fit", recording)
    moments = [i.created_at for i in reversed(issues[90:])]  # newest first, as evaluate asks
    ahead.fit_ahead(moments)
    deadline = time.monotonic() + 120
    while len(ahead._fits) < len(cutoffs) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert fitted == cutoffs[::-1]  # each once, in the order of first need: newest first
    on_demand = dm.BucketDuplicates(snapshot, index, LABELS, Config(), cutoffs, replay, {})
    for moment in (issues[100].created_at, issues[130].created_at, issues[155].created_at):
        assert ahead.for_moment(moment) == on_demand.for_moment(moment)
    assert fitted == cutoffs[::-1]  # answered from the fits ahead, none again


def test_the_decision_names_where_its_duplicate_settings_come_from(tmp_path):
    """calibration.json's threshold is named as calibrated, with or without fitted weights,
    only with enough known pairs; else the prior's threshold is used and named."""

    from issue_assistant.config.sections import Config
    from issue_assistant.engines import create
    from issue_assistant.index.duplicates import SCORE_VERSION
    from issue_assistant.learn.calibration_file import (
        CalibrationFile,
        DuplicateCalibration,
        write_calibration,
    )

    engine = create("similar", Config(), LABELS)
    context = settings_context(tmp_path)
    assert engine.duplicate_settings(context).source == "prior"
    cases = ((None, 25, 0.7), ({"bias": -3.0, "title": 4.0}, 25, 0.7), (None, 4, None))
    for weights, found, threshold in (*cases, (None, 25, None)):
        dup = DuplicateCalibration(
            target_precision=0.8,
            threshold=threshold,
            duplicates=30,
            negatives=200,
            weights=weights,
            model="learned" if weights else "hand-weighted",
            positives_found=found,
            score_version=SCORE_VERSION,
        )
        cal = CalibrationFile(
            repository="o/r",
            cutoff=T0,
            fingerprint="f" * 16,
            labelled_issues=0,
            target_precision=0.9,
            labels={},
            duplicates=dup,
        )
        write_calibration(cal, tmp_path)
        got = engine.duplicate_settings(context)
        assert got.weights == weights
        if threshold is not None:
            assert (got.threshold, got.source) == (0.7, "calibrated")
            assert "threshold 0.70 (calibrated on this repository's 30 known" in got.describe()
        elif found < dm.MIN_CALIBRATION_PAIRS:
            assert got.source == "prior" and "4 known duplicates with their original" in got.where
            assert "too few to calibrate on" in got.where
        else:  # enough pairs, and no threshold reached the target precision
            assert got.source == "prior" and "too few" not in got.where
            assert "no threshold was calibrated on this repository's 25 known" in got.where


def test_the_prior_shows_its_false_rate_only_on_enough_negatives():
    """The prior's fallback is the lowest threshold whose false-duplicate rate is at most 1 in
    100: on 57 negatives (one small snapshot) no false proposal shows that, so the highest
    threshold answers; on 457, 4 false ones do."""
    from issue_assistant.learn.duplicate_prior import MIN_NEGATIVES, choose_prior

    rows = [(0.5, 12, 2, 9), (0.7, 6, 2, 4), (0.9, 2, 1, 1), (0.975, 0, 0, 0)]
    few = choose_prior([(t, p, c, 0) for t, p, c, _ in rows], 4, 57, 0.8)
    assert MIN_NEGATIVES > 57 and (few.threshold, few.rule) == (0.975, "highest")
    enough = choose_prior(rows, 19, 457, 0.8)
    assert (enough.threshold, enough.rule, enough.false) == (0.7, "false rate", 4)
    # under the cap, a lower threshold that adds a false proposal and no right one is not taken
    flat = [(0.6, 7, 2, 4), (0.65, 6, 2, 3), (0.7, 5, 2, 3), (0.8, 3, 1, 1)]
    assert (choose_prior(flat, 19, 400, 0.8).threshold, choose_prior(flat, 19, 400, 0.8).false) == (
        0.65,
        3,
    )


def test_a_report_filed_again_is_a_known_duplicate_in_the_fits_not_a_negative(
    poetry_snapshot, poetry_index
):
    """python-poetry #10284 and #10285, #10283 filed again by its reporter within 81 seconds
    and closed unmarked: the duplicate fits count them as known duplicates of the first copy
    (a proposal of #10283 is right), never among the sampled non-duplicates (where it was false)."""
    from issue_assistant.config.labels import LabelsConfig
    from issue_assistant.config.sections import Config
    from issue_assistant.tracker.duplicates import refiled

    again = refiled(poetry_snapshot.all_issues())
    assert again[10284] == {10283} and again[10285] == {10283, 10284}
    cutoff = poetry_snapshot.repository.fetched_at
    replay = replayer(poetry_snapshot, poetry_index, LabelsConfig())
    fits = dm.BucketDuplicates(
        poetry_snapshot, poetry_index, LabelsConfig(), Config(), [cutoff], replay, again
    )
    dups = {i.number for i in fits._dups}
    others = {i.number for i in fits._others}
    assert {10284, 10285} <= dups and not {10284, 10285} & others
    # the same draw as without them, less them: the other negatives are unchanged
    closed = [i for i in poetry_snapshot.all_issues() if i.state == "closed"]
    assert dm.negatives(closed, again, 200) == [
        i for i in dm.negatives(closed, {}, 200) if i.number not in again
    ]
    replayed = replay(poetry_snapshot.get_issue(10284))
    assert replayed.duplicate and replayed.accept == {10283}
    assert replayed.positives == 1  # the first copy is among its candidates
    assert dm.outcome(replayed, None).ruled  # claimed by rule, whatever the threshold
    plain = replay(poetry_snapshot.get_issue(10283))
    assert not plain.duplicate and plain.accept == frozenset()
    assert not dm.outcome(plain, None).ruled


def test_reports_filed_again_leave_the_threshold_where_the_scores_put_it():
    """A report filed again is claimed by rule at 1: it must not pull the threshold up by
    making the highest thresholds look precise (the rest of the claims are what it decides)."""
    scored = [
        dm.Outcome(((1, 0.8),), True, frozenset({1})),
        dm.Outcome(((2, 0.7),), True, frozenset({2})),
        dm.Outcome(((3, 0.72),), False, frozenset()),
        dm.Outcome(((4, 0.99),), False, frozenset()),
    ]
    ruled = [dm.Outcome(((9, 1.0),), True, frozenset({9}), ruled=True) for _ in range(8)]
    alone = dm.choose_threshold(scored, 0.8, 10, 0.05)
    assert dm.choose_threshold(scored + ruled, 0.8, 10, 0.05) == alone
    counted = [dm.Outcome(o.scored, o.duplicate, o.accept) for o in ruled]
    _, pulled = dm.choose_threshold(scored + counted, 0.8, 10, 0.05)
    assert pulled != alone[1]  # counted as scores, the ruled claims would move it


def test_reports_filed_again_do_not_count_towards_a_threshold_of_its_own(
    poetry_snapshot, poetry_index
):
    """A repository whose only known pairs are reports filed again has nothing a threshold can
    be measured on: `calibrates` is false for them, so the prior's threshold answers."""
    from issue_assistant.config.labels import LabelsConfig

    replay = replayer(poetry_snapshot, poetry_index, LabelsConfig())
    copies = [replay(poetry_snapshot.get_issue(n)) for n in (10284, 10285)]
    assert all(r.positives and r.ruled and not r.calibrates for r in copies)
    unruled = [
        replace(r, pairs=tuple((n, replace(f, refiled=False)) for n, f in r.pairs)) for r in copies
    ]
    assert all(r.calibrates for r in unruled)  # as scored pairs, they would count


def test_why_a_bucket_has_no_threshold_says_which_of_the_two_it_is():
    """Too few known pairs found, or enough found and no threshold reaching the target."""
    few = dm.BucketFit(known=14, found=6)
    assert few.why.startswith("14 known duplicates closed before this bucket's cutoff, 6 with")
    assert "too few to calibrate on" in few.why
    enough = dm.BucketFit(known=14, found=dm.MIN_CALIBRATION_PAIRS + 2)
    assert enough.why == (
        "no threshold reached the target precision on enough proposals, with the 12 known "
        "duplicates with their original found before this bucket's cutoff"
    )
