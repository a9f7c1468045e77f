"""`analyze` on the shared snapshot: comment, JSON decision, context directory, errors."""

import json

import pytest

from issue_assistant.cli import main
from issue_assistant.comment import extract_plan
from issue_assistant.decision import Decision, Duplicate
from tests.conftest import HF, ROOT

LABELS = str(ROOT / "bench" / "hf-datasets.labels.toml")


@pytest.fixture
def cache(tmp_path_factory):
    return str(tmp_path_factory.getbasetemp() / "analyze-cache")


def analyze(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["analyze", "--snapshot", str(HF), "--labels", LABELS, *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_comment_for_a_real_issue(capsys, cache):
    code, out, _ = analyze(capsys, "--issue", "7016", "--cache-dir", cache)
    assert code == 0
    plan = extract_plan(out)
    assert plan is not None and plan.issue == 7016 and plan.repository == "huggingface/datasets"
    assert plan.type == "enhancement"  # the feature-request template, voted by similar issues
    assert plan.evidence and all(e.number != 7016 for e in plan.evidence)
    assert "Similar earlier issues" in out and "/assistant approve" in out


def test_json_decision(capsys, cache):
    code, out, _ = analyze(capsys, "--issue", "#6003", "--json", "--cache-dir", cache)
    assert code == 0
    data = json.loads(out)
    words = data.pop("confidence_words")  # beside the numbers: the words the comment uses
    decision = Decision.model_validate(data)
    assert words == decision.words() and set(words) == set(decision.labels())
    assert set(words.values()) <= {"very likely", "likely", "possible"}
    assert decision.engine == "similar"
    assert decision.usage.latency_s > 0
    assert decision.candidates and 6003 not in decision.candidates


def test_context_directory_is_complete_and_deterministic(capsys, cache, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for d in (a, b):
        analyze(capsys, "--issue", "7016", "--cache-dir", cache, "--context-dir", str(d))
    names = sorted(p.name for p in a.iterdir())
    assert names == [
        "discussions.md",
        "files.md",
        "instructions.md",
        "issue.md",
        "labels.md",
        "project.md",
        "releases.md",
        "similar.md",
    ]
    assert "Not known" in (a / "releases.md").read_text()  # hf-datasets has no release lines
    assert "No checkout" in (a / "files.md").read_text()  # this checkout is not datasets'
    for name in names:
        assert (a / name).read_text() == (b / name).read_text()
    issue_md = (a / "issue.md").read_text()
    assert "untrusted data" in issue_md and "```text\n`drop_duplicates` method\n```" in issue_md
    assert "`dataset-viewer`" in (a / "labels.md").read_text()
    assert '"duplicate"' in (a / "instructions.md").read_text()
    assert "#7016" not in (a / "similar.md").read_text()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--issue", "999999"], "no issue #999999 in the snapshot"),
        (["--issue", "7015"], "is a pull request"),
        ([], "give -R OWNER/REPO --issue N (live), or --snapshot FILE --issue N"),
    ],
)
def test_clear_errors(capsys, cache, args, message):
    code, out, err = analyze(capsys, *args, "--cache-dir", cache)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err


def test_missing_snapshot_and_bad_config(capsys, tmp_path):
    assert (
        main(
            [
                "analyze",
                "--snapshot",
                str(tmp_path / "nope.jsonl"),
                "--issue",
                "1",
                "--labels",
                LABELS,
            ]
        )
        == 2
    )
    assert "nope.jsonl: snapshot file not found" in capsys.readouterr().err
    bad = tmp_path / "config.toml"
    bad.write_text("[engine]\nname = 3\n")
    assert (
        main(
            [
                "analyze",
                "--snapshot",
                str(HF),
                "--issue",
                "1",
                "--labels",
                LABELS,
                "--config",
                str(bad),
            ]
        )
        == 2
    )
    assert "config.toml:2: engine.name" in capsys.readouterr().err
    assert (
        main(
            [
                "analyze",
                "--snapshot",
                str(HF),
                "--issue",
                "7016",
                "--labels",
                LABELS,
                "--engine",
                "nonesuch",
            ]
        )
        == 2
    )
    assert "unknown engine 'nonesuch'" in capsys.readouterr().err


def test_broken_snapshot_line_is_named(capsys, tmp_path):
    snap = tmp_path / "s.jsonl"
    snap.write_text(
        '{"kind": "repository", "full_name": "o/r", "fetched_at": "2024-01-01T00:00:00Z"}\n'
        '{"kind": "issue", "number": "x"}\n'
    )
    assert main(["analyze", "--snapshot", str(snap), "--issue", "1", "--labels", LABELS]) == 2
    assert "s.jsonl:2: field number" in capsys.readouterr().err


def test_fake_engine_decision_is_validated(capsys, cache, fake_engine):
    fake_engine.enqueue(
        Decision(
            type="bug",
            areas=["streaming", "made-up"],
            duplicate=Duplicate(number=7016, reason="itself"),
        )
    )
    code, out, _ = analyze(
        capsys, "--issue", "7016", "--engine", "fake", "--json", "--cache-dir", cache
    )
    data = json.loads(out)
    d = Decision.model_validate({k: v for k, v in data.items() if k != "confidence_words"})
    assert code == 0 and d.type == "bug" and d.areas == ["streaming"]
    assert d.dropped == ["made-up"] and d.duplicate is None
    ctx = fake_engine.history[0]
    assert ctx.issue.number == 7016 and ctx.issue.labels == []
    at, issue = ctx.moment, ctx.issue
    assert at.get_issue(7016, issue) is None and at.get_issue(7100, issue) is None  # and later
    assert all(c.issue.created_at < issue.created_at for c in at.search("dataset", under=issue))


def test_failed_engine_falls_back_or_fails_cleanly(capsys, cache, fake_engine, tmp_path):
    fake_engine.enqueue(RuntimeError("model crashed"))
    code, out, err = analyze(
        capsys, "--issue", "7016", "--engine", "fake", "--json", "--cache-dir", cache
    )
    assert code == 0 and json.loads(out)["engine"] == "similar"
    assert "fake (unknown): model crashed" in err
    no_fallback = tmp_path / "config.toml"
    no_fallback.write_text('[engine]\nfallback = ""\n')
    fake_engine.enqueue(RuntimeError("model crashed"))
    code, out, err = analyze(
        capsys,
        "--issue",
        "7016",
        "--engine",
        "fake",
        "--config",
        str(no_fallback),
        "--cache-dir",
        cache,
    )
    assert code == 1 and out == "" and "nothing was written" in err
