"""The tables of `bench/likely_files.py`, and the calibration it writes (weights, precision).

The weights are fitted on the older half of the fixed issues (by when they were opened) and
scored on the newer half, beside the scores on all: coordinate ascent for accuracy@5 (then MRR),
and of the weightings it tried within `AT5_SLACK` of the best, the one whose list the comment
could show would hold the most right files on that half. The precision table (by standing) is
measured on the older half with those weights, and the comment's rule (show a file when its
estimated precision is at least 0.5) is checked on the newer half.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from pathlib import Path

import tomlkit

from issue_assistant.evaluate.files import RankScores
from issue_assistant.evaluate.fixes import Fix
from issue_assistant.evaluate.likely_replay import Row, Table, fit_weights, halves
from issue_assistant.likely.rank import (
    STANDING_WORDS,
    STANDINGS,
    LikelyCalibration,
    Weights,
    standing,
)

SIGNAL_ROWS = (
    ("baseline", "before: stack frames, then named paths, then BM25 (the old likely files)"),
    ("frame", "stack frames (innermost first)"),
    ("path", "paths, modules and file names named in the issue"),
    ("error", "error messages found in the code"),
    ("words", "BM25 over path words, identifiers and docstrings"),
    ("words:path", "BM25 over path words alone"),
    ("words:idents", "BM25 over identifiers alone"),
    ("words:docs", "BM25 over docstrings and comments alone"),
    ("history", "files changed by the fixes of similar earlier issues"),
    ("prior", "files most often changed by earlier fixes"),
)
SHOW_AT = 0.5
MIN_COUNT = 8  # a (reason, rank) cell measured on fewer files gets no estimate


def _row(name: str, s: RankScores) -> str:
    return f"| {name} | " + " | ".join(s.row()) + " |"


def _p(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def precision_table(
    table: Table, weights: Weights, subset: Sequence[int], clear: float, by: str = "standing"
) -> dict[str, tuple]:
    """Cell -> (right, shown) over the first 10 ranked files of `subset`; the cell is the file's
    standing (`likely.rank.standing`), or with `by="evidence"` its strongest reason and rank."""
    cells: dict[str, list[int]] = {}
    for i in subset:
        truth = set(table.truth(table.rows[i]))
        if not truth:
            continue
        for n, r in enumerate(table.ranked(i, weights), start=1):
            if by == "standing":
                key = standing(n, r.margin, clear)
            else:
                key = f"{r.evidence()} @ {n if n <= 2 else '3-5' if n <= 5 else '6-10'}"
            cell = cells.setdefault(key, [0, 0])
            cell[0] += r.path in truth
            cell[1] += 1
    return {k: tuple(v) for k, v in sorted(cells.items())}


MARGINS = (0.5, 1.0, 1.5, 2.0, 3.0)
CLEAR_PRECISION = 0.55  # a first file's lead counts as clear from where this is reached


def clear_margin(table: Table, weights: Weights, subset: Sequence[int]) -> float:
    """The smallest lead of the first file over the second (of `MARGINS`) from which the first
    files of `subset` were right at least `CLEAR_PRECISION` of the time (30 files or more)."""
    for margin in MARGINS:
        right, n = precision_table(table, weights, subset, margin).get("first-clear", (0, 0))
        if n >= 30 and right / n >= CLEAR_PRECISION:
            return margin
    return MARGINS[-1]


def shown_precision(
    table: Table, cal: LikelyCalibration, subset: Sequence[int], at: float
) -> tuple:
    """On `subset`: issues with a list shown, files shown, files right, lists with a right one."""
    issues = files = right = hit = 0
    scored = 0
    for i in subset:
        truth = set(table.truth(table.rows[i]))
        if not truth:
            continue
        scored += 1
        shown = [
            r
            for n, r in enumerate(table.ranked(i, cal.weights, 5), start=1)
            if (cal.estimate(n, r.margin) or 0.0) >= at
        ]
        if shown:
            issues += 1
            files += len(shown)
            good = sum(r.path in truth for r in shown)
            right += good
            hit += good > 0
    return scored, issues, files, right, hit


def main_run(runs: dict) -> dict:
    return runs.get("moment") or next(iter(runs.values()))


AT5_SLACK = 0.01  # weightings this close to the best accuracy@5 compete on what can be shown


def calibrate(
    table: Table, weights: Weights, subset: Sequence[int], source: str = ""
) -> LikelyCalibration:
    """`weights` with their clear margin and precision by standing, measured on `subset`."""
    clear = clear_margin(table, weights, subset)
    cells = precision_table(table, weights, subset, clear)
    return LikelyCalibration(
        weights=weights,
        precision={k: round(r / n, 3) for k, (r, n) in cells.items() if n >= MIN_COUNT},
        clear_margin=clear,
        kinds=("source",),
        source=source,
    )


def showable(
    table: Table, cal: LikelyCalibration, subset: Sequence[int], at: float = SHOW_AT
) -> int:
    """The right files `cal` would list in the comment on `subset` (the files at a standing
    whose estimated precision is at least `at`)."""
    cells = precision_table(table, cal.weights, subset, cal.clear_margin)
    return sum(r for k, (r, _) in cells.items() if (cal.precision.get(k) or 0.0) >= at)


def choose(
    table: Table,
    candidates: dict[Weights, tuple[float, float]],
    subset: Sequence[int],
    source: str = "",
) -> LikelyCalibration:
    """Of the weightings within `AT5_SLACK` of the best accuracy@5, the one whose list in the
    comment would hold the most right files on `subset` (then accuracy@5, then MRR): ranking
    to five alone leaves the first file's precision, what the comment is gated on, to chance."""
    top = max(v[0] for v in candidates.values())
    near = [w for w, v in candidates.items() if v[0] >= top - AT5_SLACK]
    fits = [calibrate(table, w, subset, source) for w in near]
    return max(fits, key=lambda c: (showable(table, c, subset), candidates[c.weights]))


def fit_calibration(rows: Sequence[Row], source: str = "") -> LikelyCalibration:
    """Weights fitted on the older half of `rows` (`fit_weights`, then `choose`), the clear
    margin, and the precision by standing on that half."""
    older, _ = halves(rows)
    table = Table(rows, ("source",))
    seen: dict[Weights, tuple[float, float]] = {}
    fit_weights(table, older, seen=seen)
    return choose(table, seen, older, source)


def report(runs: dict, fixes: Sequence[Fix], cal: LikelyCalibration, **about) -> str:  # noqa: ANN003
    """The Markdown section, for the calibration `fit_calibration` fitted."""
    main = main_run(runs)
    rows: list[Row] = main["rows"]
    older, newer = halves(rows)
    source = Table(rows, ("source",))
    every = Table(rows, ("source", "test", "doc"))
    fitted = cal.weights
    default = Weights()
    n_src = sum(1 for r in rows if r.truth["source"])
    n_all = sum(1 for r in rows if r.truth["all"])
    found = sum(1 for r in rows if set(r.truth["source"]) & set(r.present))
    hashed = about.get("hash_issues") or set()
    hash_rows = [i for i, r in enumerate(rows) if r.issue in hashed]
    hash_form = len(hash_rows)
    out = [
        f"Data: `{about['snapshot']}` (the issues and pull requests) and a clone of "
        f"{about['clone']}; {len(fixes)} issues closed by a merged pull request that says "
        f'"Fixes #N" (or closes, resolves; or the issue\'s URL), ground truth in '
        f"`{about['truth']}` (built in {about['truth_seconds']:.0f} s); {len(rows)} replayed"
        + (f" ({hash_form} use the `#N` form)" if hash_form else "")
        + f". {n_src} changed a source file (not tests, docs or the changelog) that existed "
        f"before the fix, {n_all} any such file; in {found} of the {n_src} a changed source file "
        "was in the code at the issue's moment (a file added by the fix, or since, cannot be "
        "found). Each issue is replayed at its **moment**, the last commit before it was opened "
        "(strict: nothing later is seen; the fix's parent is measured in `--at parent`), the code "
        "read from git objects into a fresh in-memory index per moment.",
        "",
        f"Commit {about['commit']}; {about['machine']}; 2 cores shared with up to 7 other "
        f"engineers' jobs (load average {about.get('load', '?')} over 1, 5 and 15 min after "
        "the speed was measured), so times are upper bounds.",
        "",
        "**Each signal alone and combined**, source files (tests and docs are neither predicted "
        f"nor counted), {n_src} issues; the fitted weights are fitted on the older half "
        f"({len(older)} issues, by opening date) and scored on the newer half ({len(newer)}):",
        "",
        "| signal | @1 | @5 | @10 | MRR |",
        "| --- | --- | --- | --- | --- |",
    ]
    for name, label in SIGNAL_ROWS:
        out.append(_row(f"{label} (`{name}`)", source.signal_alone(name)))
    out += [
        _row("**combined**, the weights before fitting", source.scores(default)),
        _row("**combined**, fitted weights (all issues)", source.scores(fitted)),
        _row("**combined**, fitted weights, older half (fitted on)", source.scores(fitted, older)),
        _row("**combined**, fitted weights, newer half (held out)", source.scores(fitted, newer)),
        _row(
            f"**combined**, fitted weights, the {hash_form} issues linked by `#N`",
            source.scores(fitted, hash_rows),
        ),
        _row(
            "combined without history and prior (text and code only)",
            source.scores(Weights(**{**fitted.__dict__, "history": 0.0, "prior": 0.0})),
        ),
        "",
        "Fitted weights: " + ", ".join(f"{k} {v}" for k, v in fitted.__dict__.items()) + " "
        f"(coordinate ascent for accuracy@5, then MRR, on the older half; of the weightings "
        f"within {AT5_SLACK} of its best accuracy@5, the one whose files the comment could show "
        "held the most right files on that half).",
        "",
        "**With tests and docs** (any kind predicted; the truth is every file the fix changed "
        f"that existed before it), {n_all} issues; and **function-level** (the function at each "
        "predicted file's line, against the functions the fix touched in source files):",
        "",
        "| measure | @1 | @5 | @10 | MRR |",
        "| --- | --- | --- | --- | --- |",
        _row("files, with tests and docs, the old likely files", every.signal_alone("baseline")),
        _row("files, with tests and docs, combined (fitted weights)", every.scores(fitted)),
        _row(
            f"functions, combined ({sum(1 for r in rows if r.truth['functions'])} issues)",
            source.function_scores(fitted),
        ),
    ]
    if "parent" in runs:
        parent = Table(runs["parent"]["rows"], ("source",))
        out += [
            "",
            "At the fix's **parent** instead of the moment (the code when the fix began):",
            "",
            "| measure | @1 | @5 | @10 | MRR |",
            "| --- | --- | --- | --- | --- |",
            _row("combined, fitted weights, at the parent", parent.scores(fitted)),
            _row("the old likely files, at the parent", parent.signal_alone("baseline")),
        ]
    out += _shown(source, cal, older, newer)
    out += _speed(main, about)
    return "\n".join(out)


def _shown(source: Table, cal: LikelyCalibration, older, newer) -> list[str]:  # noqa: ANN001
    out = [
        "",
        "**What the comment shows** (`[code] min_precision`, default 0.5): a file is listed when "
        "the share of files at the same standing that the fix changed, measured on the older half "
        f"(cells of at least {MIN_COUNT} files), is at least the threshold; the standing is the "
        "rank, and for the first file whether it leads the second by a clear margin (at least "
        f"{cal.clear_margin} in combined score, the smallest lead from which first files were "
        f"right {CLEAR_PRECISION:.0%} of the time on the older half). Checked on the newer half:",
        "",
        "| threshold | issues with a list | files listed | precision (files right) | lists with a right file |",  # noqa: E501
        "| --- | --- | --- | --- | --- |",
    ]
    for at in (0.3, 0.4, SHOW_AT, 0.6, 0.7):
        scored, issues, files, right, hit = shown_precision(source, cal, newer, at)
        prec = f"{right / files:.2f} ({right}/{files})" if files else "–"
        lists = f"{hit / issues:.2f} ({hit}/{issues})" if issues else "–"
        out.append(f"| {at} | {issues} of {scored} | {files} | {prec} | {lists} |")
    out += ["", "Precision by standing, measured on the older half and seen on the newer:", ""]
    out += ["| standing | older: files | right | precision | newer: files | right | precision |"]
    out += ["| --- | --- | --- | --- | --- | --- | --- |"]
    new_cells = precision_table(source, cal.weights, newer, cal.clear_margin)
    old_cells = precision_table(source, cal.weights, older, cal.clear_margin)
    for key in [k for k in STANDINGS if k in old_cells]:
        right, n = old_cells[key]
        r2, n2 = new_cells.get(key, (0, 0))
        seen = f"{n2} | {r2} | {r2 / n2:.2f}" if n2 else "0 | 0 | –"
        out.append(f"| {STANDING_WORDS[key]} | {n} | {right} | {right / n:.2f} | {seen} |")
    out += ["", "And by strongest reason and rank (all issues; what the reasons are worth):", ""]
    out += ["| reason @ rank | files | right | precision |", "| --- | --- | --- | --- |"]
    everyone = list(range(len(source.rows)))
    cells = precision_table(source, cal.weights, everyone, cal.clear_margin, by="evidence")
    for key, (right, n) in cells.items():
        if n >= MIN_COUNT:
            out.append(f"| {key} | {n} | {right} | {right / n:.2f} |")
    return out


def _p50_seconds(builds: list) -> str:
    """The median build time, or a plain word when every build reused an index."""
    return f"p50 {statistics.median([b[1] for b in builds]):.1f} s" if builds else "none rebuilt"


def _speed(run: dict, about: dict) -> list[str]:
    # not the reused index of a same moment (unless every build was that quick)
    builds = [b for b in run["builds"] if b[1] > 0.01] or run["builds"]
    lat = [r.latency for r in run["rows"]]
    warm = about.get("warm") or lat
    seconds, files = about["cold"]
    return [
        "",
        "**Speed**: index of the largest moment from scratch (read from git objects, every file "
        f"analysed) {seconds:.1f} s for {files} files (goal under 60 s); a moment's index with "
        f"the files' fields already analysed: {_p50_seconds(builds)} over {len(builds)} moments; "
        f"likely files per issue, warm, on that largest index "
        f"({len(warm)} issues; every signal, combined, each file's function found): p50 "
        f"{statistics.median(warm) * 1000:.0f} ms, p95 {_p(warm, 0.95) * 1000:.0f} ms, most "
        f"{max(warm) * 1000:.0f} ms (goal under 200 ms); the signals alone in the replay, p50 "
        f"{statistics.median(lat) * 1000:.0f} ms over {len(lat)} issues at their own moments; "
        f"the replay took {run['seconds'] / 60:.0f} min.",
    ]


def write_calibration(path: Path, cal: LikelyCalibration, source: str) -> Path:
    """`likely_files.toml`: the weights and the precision table, with what measured them."""
    doc = tomlkit.document()
    doc.add(tomlkit.comment("Written by bench/likely_files.py: do not edit by hand (rerun it)."))
    doc["source"] = source
    doc["kinds"] = list(cal.kinds)
    doc["clear_margin"] = cal.clear_margin
    weights = tomlkit.table()
    for key, value in cal.weights.__dict__.items():
        weights[key] = value
    doc["weights"] = weights
    precision = tomlkit.table()
    for key, value in sorted(cal.precision.items()):
        precision[key] = value
    doc["precision"] = precision
    path.write_text(tomlkit.dumps(doc), encoding="utf-8")
    return path
