"""A tampered or damaged label model is never trusted: one log line, then a refit (issue 16)."""

from __future__ import annotations

import io
import json
import logging
import zipfile
from collections.abc import Callable
from datetime import timedelta

import numpy as np
import pytest

from issue_assistant.config.sections import Config
from issue_assistant.engines import create
from issue_assistant.index.local import open_index
from issue_assistant.learn import artifact, store
from issue_assistant.learn.model import fit
from issue_assistant.learn.rows import rows_from
from issue_assistant.pipeline import analyze
from issue_assistant.tracker.asof import AsOfView
from tests.moments import moment_of
from tests.test_learn import LABELS, T0, snap, synthetic

KEY = store.labels_key(LABELS)


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A valid artifact's arrays (type learned: softmax or binary; area: one-vs-rest)."""
    issues = synthetic(120)
    cutoff = T0 + timedelta(days=30)
    model = fit(rows_from(snap(issues), LABELS, cutoff), LABELS, cutoff)
    assert model.mode("type") == "learned" and model.mode("area") == "learned"
    return artifact.to_arrays(model, KEY)


def _write(path, arrays: dict[str, np.ndarray], *, fix_checksum: bool) -> None:
    arrays = dict(arrays)
    if fix_checksum:  # the file stays self-consistent: only the checks on content can catch it
        meta = json.loads(arrays["meta"].tobytes())
        meta["checksum"] = artifact.checksum(arrays)
        arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    with path.open("wb") as fh:
        np.savez(fh, **arrays)


def _meta(arrays, change: Callable[[dict], None]) -> dict[str, np.ndarray]:
    meta = json.loads(arrays["meta"].tobytes())
    change(meta)
    return {**arrays, "meta": np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)}


def _set(key, value):  # noqa: ANN001, ANN202
    def change(meta: dict) -> None:
        meta[key] = value

    return change


def _group(name, key, value):  # noqa: ANN001, ANN202
    def change(meta: dict) -> None:
        for g in meta["groups"]:
            if g["group"] == name:
                if value is _DROP:
                    g.pop(key)
                else:
                    g[key] = value

    return change


_DROP = object()


def _nan(coef: np.ndarray) -> np.ndarray:
    out = coef.copy()
    out.flat[len(out.flat) // 2] = np.nan
    return out


CASES: dict[str, tuple[Callable[[dict], dict], str]] = {
    "coefficients of the wrong shape": (
        lambda a: {**a, "group_type_coef": a["group_type_coef"][:-3]},
        "group_type_coef",
    ),
    "coefficients transposed": (
        lambda a: {**a, "group_area_coef": np.ascontiguousarray(a["group_area_coef"].T)},
        "group_area_coef",
    ),
    "coefficients as float64": (
        lambda a: {**a, "group_type_coef": a["group_type_coef"].astype(np.float64)},
        "group_type_coef",
    ),
    "a NaN coefficient": (lambda a: {**a, "group_type_coef": _nan(a["group_type_coef"])}, "finite"),
    "an intercept missing": (
        lambda a: {k: v for k, v in a.items() if k != "group_type_intercept"},
        "group_type_intercept",
    ),
    "an idf shorter than its vocabulary": (
        lambda a: {**a, "part0_idf": a["part0_idf"][:-1]},
        "part0_idf",
    ),
    "an idf below 1": (
        lambda a: {**a, "part1_idf": a["part1_idf"] * 0.5},
        "part1_idf",
    ),
    "a repeated term": (
        lambda a: {
            **a,
            "part0_terms": np.frombuffer(
                json.dumps(["x"] * len(json.loads(a["part0_terms"].tobytes()))).encode(),
                dtype=np.uint8,
            ),
        },
        "part0_terms",
    ),
    "terms that are not JSON": (
        lambda a: {**a, "part2_terms": np.frombuffer(b"\xff[", dtype=np.uint8)},
        "part2_terms",
    ),
    "one class more than the coefficients": (
        lambda a: _meta(a, _group("type", "classes", ["bug", "enhancement", "docs"])),
        "group type",
    ),
    "a class twice": (
        lambda a: _meta(a, _group("area", "classes", ["cli", "cli"])),
        "repeated classes",
    ),
    "an unknown head kind": (
        lambda a: _meta(a, _group("type", "kind", "multiclass")),
        "kind",
    ),
    "a group's key missing": (
        lambda a: _meta(a, _group("type", "classes", _DROP)),
        "classes",
    ),
    "a negative issue count": (
        lambda a: _meta(a, _set("issues", -5)),
        "issues",
    ),
    "an unknown metadata key": (
        lambda a: _meta(a, _set("pickle", "cos\nsystem")),
        "pickle",
    ),
    "another token pattern": (
        lambda a: _meta(a, lambda m: m["featurizer"][0].update(token_pattern="(a+)+$")),
        "token_pattern",
    ),
    "a cutoff without a timezone": (
        lambda a: _meta(a, _set("cutoff", "2024-01-31T00:00:00")),
        "timezone",
    ),
    "a broken fingerprint": (
        lambda a: _meta(a, _set("fingerprint", "not hex")),
        "fingerprint",
    ),
    "a threshold table of the wrong kind": (
        lambda a: _meta(a, _group("type", "table", {"rows": "none"})),
        "threshold table",
    ),
}


def _one_line(caplog) -> str:  # noqa: ANN001
    lines = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(lines) == 1, lines
    assert "\n" not in lines[0] and "Traceback" not in lines[0]
    return lines[0]


@pytest.mark.parametrize("fix_checksum", [True, False], ids=["self-consistent", "as tampered"])
@pytest.mark.parametrize("case", list(CASES))
def test_a_tampered_artifact_is_refused_in_one_line(tmp_path, saved, caplog, case, fix_checksum):
    change, word = CASES[case]
    path = store.model_path(tmp_path)
    _write(path, change(saved), fix_checksum=fix_checksum)
    with caplog.at_level(logging.WARNING):
        assert store.load_model(tmp_path, KEY) is None
    line = _one_line(caplog)
    assert str(path) in line and "refitting" in line
    if fix_checksum:  # the content check names what is wrong
        assert word in line
    else:
        assert "checksum" in line or word in line


def test_the_untouched_arrays_load(tmp_path, saved, caplog):
    _write(store.model_path(tmp_path), saved, fix_checksum=False)
    with caplog.at_level(logging.WARNING):
        model = store.load_model(tmp_path, KEY)
    assert model is not None and not caplog.records
    assert model.probabilities_many([("crash error", "traceback")])[0]["type"]


@pytest.mark.parametrize(
    "damage",
    [
        lambda b: b[: len(b) // 2],
        lambda b: b"\0" * len(b),
        lambda b: b"",
        lambda b: b"PK\x03\x04" + b"\xff" * 200,
    ],
    ids=["truncated", "zeroed", "empty", "a broken zip"],
)
def test_a_damaged_file_is_refused_in_one_line(tmp_path, saved, caplog, damage):
    buf = io.BytesIO()
    np.savez(buf, **saved)
    path = store.model_path(tmp_path)
    path.write_bytes(damage(buf.getvalue()))
    with caplog.at_level(logging.WARNING):
        assert store.load_model(tmp_path, KEY) is None
    assert str(path) in _one_line(caplog)


def test_a_pickled_array_is_never_loaded(tmp_path, saved, caplog):
    path = store.model_path(tmp_path)
    arrays = {**saved, "group_type_coef": np.array([{"a": 1}], dtype=object)}
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    path.write_bytes(buf.getvalue())
    with caplog.at_level(logging.WARNING):
        assert store.load_model(tmp_path, KEY) is None
    assert str(path) in _one_line(caplog)
    with zipfile.ZipFile(path) as z:  # the file really held a pickle
        assert "group_type_coef.npy" in z.namelist()


def test_analyze_refits_over_a_tampered_artifact_and_heals_it(tmp_path, saved, caplog):
    issues = synthetic(100)
    snapshot = snap(issues)
    index = open_index(snapshot, tmp_path)
    path = store.model_path(index.path)
    bad = {**saved, "group_type_coef": np.ascontiguousarray(saved["group_type_coef"][:7])}
    _write(path, bad, fix_checksum=True)
    config = Config()

    def run():  # noqa: ANN202
        engine = create("similar", config, LABELS)  # a new engine each run
        view = AsOfView.for_issue(snapshot, 95)
        return analyze(
            moment_of(view, index, LABELS, config),
            view.target(),
            config=config,
            engine=engine,
        ).decision

    with caplog.at_level(logging.WARNING):
        first = run()
    assert first.label_model["type"] == "learned" and first.probabilities["type"]
    assert any("group_type_coef" in r.getMessage() for r in caplog.records)
    healed = store.load_model(index.path, KEY)  # the refit replaced the bad file
    assert healed is not None and healed.groups["type"].head is not None
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        second = run()  # a later run loads the healed file, quietly
    assert not caplog.records
    assert second.probabilities == first.probabilities
