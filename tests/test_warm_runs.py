"""Warm runs do no O(n) work: a snapshot unchanged since the index was built is not parsed, and
a live run after the first one reads candidates from the index (requests counted)."""

from __future__ import annotations

import gzip
import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

from issue_assistant.cli import main
from issue_assistant.config.files import load_both
from issue_assistant.config.sections import Config, IndexConfig
from issue_assistant.decision import Decision
from issue_assistant.engines.fake import FakeEngine
from issue_assistant.live import analyze_live
from issue_assistant.tracker.models import Issue, Repository, User
from issue_assistant.tracker.snapshot import write_snapshot
from tests.fakegithub import FakeGitHub
from tests.fakegithub.fixtures import make_tracker

PROPERTY = "reliability"  # what each case records for tests/reliability.py

ROOT = Path(__file__).resolve().parents[1]
T0 = datetime(2024, 2, 1, tzinfo=UTC)
TOPICS = ["parquet", "streaming", "audio", "images", "cache", "map", "hub", "csv", "json", "s3"]


def issues(n: int) -> list[Issue]:
    return [
        Issue(
            number=i,
            title=f"Problem {i} with {TOPICS[i % len(TOPICS)]} loading",
            body=f"Loading {TOPICS[i % len(TOPICS)]} files fails with error code {i}.",
            user=User(login=f"user{i}"),
            created_at=T0 + timedelta(hours=i),
        )
        for i in range(1, n + 1)
    ]


def analyze(snapshot: Path, cache: Path, number: int, capsys) -> dict:
    labels = str(ROOT / "labels.toml")
    args = ["analyze", "--snapshot", str(snapshot), "--issue", str(number), "--labels", labels]
    assert main([*args, "--cache-dir", str(cache), "--json"]) == 0
    decision = json.loads(capsys.readouterr().out)
    decision.pop("usage")  # the latency differs
    return decision


def test_an_unchanged_snapshot_is_not_parsed_again(tmp_path, capsys, monkeypatch):
    path, cache = tmp_path / "s.jsonl", tmp_path / "cache"
    repo = Repository(full_name="o/r", fetched_at=T0 + timedelta(days=30))
    write_snapshot(path, repo, issues(40))
    cold = analyze(path, cache, 33, capsys)

    def no_parse(*_a, **_k):
        raise AssertionError("the snapshot was parsed on a warm run")

    monkeypatch.setattr("issue_assistant.tracker.snapshot.read_snapshot", no_parse)
    warm = analyze(path, cache, 33, capsys)
    # the same answer from the index alone, the label model the one the cold run fit and saved
    # (each run is a process of its own, as on the command line: the warm one loads the model)
    fit_now = re.compile(r"a label model fit now \([^()]*\) and saved")
    assert fit_now.search(cold["calibration"]) and "the saved label model" in warm["calibration"]
    loaded = fit_now.sub("the saved label model", cold["calibration"])
    assert warm == {**cold, "calibration": loaded}
    monkeypatch.undo()
    write_snapshot(path, repo, issues(41))  # the file changed: read again, new issue found
    assert analyze(path, cache, 41, capsys)["candidates"]


def test_a_live_run_after_the_first_makes_few_requests(tmp_path):
    server = FakeGitHub("octo/repo", token="test-token")
    with server:
        for issue in issues(60):
            server.add_issue(issue.title, issue.body, issue.user.login, created_at=issue.created_at)
        config = Config(index=IndexConfig(cache_dir=str(tmp_path / "cache")))
        labels = load_both(str(ROOT / "labels.toml"), None)[0]
        tracker = make_tracker(server)

        def run(number: int) -> None:
            FakeEngine.enqueue(Decision(type="bug"))
            result = analyze_live(
                "octo/repo",
                number,
                labels=labels,
                config=config,
                engine_name="fake",
                writes="live",
                tracker=tracker,
                now=T0 + timedelta(days=10),
            )
            assert result.skipped is None and result.action == "posted"

        run(60)  # the first run lists every issue into the index
        new = server.add_issue(
            "Problem with parquet loading again", "Loading parquet files fails", "newbie"
        )
        server.clear_requests()
        run(new)
        sent = [(r.method, r.path) for r in server.requests]
    assert len(sent) <= 10, sent
    print("requests of a warm live run:", len(sent), sent)
    assert not [
        p
        for m, p in sent
        if m == "GET" and p.rsplit("/", 1)[-1].isdigit() and p.endswith(f"/{new}") is False
    ]


def test_a_large_first_listing_spans_runs_within_a_budget(tmp_path, monkeypatch):
    from issue_assistant import sync
    from issue_assistant.index import IssueIndex
    from issue_assistant.index.local import index_path
    from issue_assistant.tracker.memory import MemoryTracker

    monkeypatch.setattr(sync, "LIST_CHUNK", 4)
    monkeypatch.setattr(sync, "LIST_BUDGET", 8)
    t = MemoryTracker("octo/repo")
    for n in range(1, 21):
        t.add_issue(n, f"Issue {n}", "body")
        t.tick()
    cache = str(tmp_path / "cache")
    path = index_path(cache, "octo/repo")
    sizes = []
    for _ in range(3):
        sync.refresh_index(t, cache, t.now)
        sizes.append(len(IssueIndex(path)))
        t.tick()
    # each run lists at most the budget, going on from the last update it committed (inclusive)
    assert sizes == [8, 15, 20]
    assert not (path / sync.CURSOR_FILE).exists() and (path / sync.SYNC_FILE).exists()
    monkeypatch.setattr(sync, "LIST_BUDGET", 100)
    t.add_issue(21, "A new one", "body")
    t.tick()
    sync.refresh_index(t, cache, t.now)
    assert len(IssueIndex(path)) == 21
    assert t.reads[-1][0] == "all_issues" and t.reads[-1][1] is not None  # only recent updates


def test_a_snapshot_update_parses_only_the_lines_that_changed(tmp_path, capsys, monkeypatch):
    from issue_assistant.index import IssueIndex
    from issue_assistant.index.local import index_path
    from issue_assistant.tracker import snapshot as snapshot_mod

    path, cache = tmp_path / "s.jsonl.gz", tmp_path / "cache"
    repo = Repository(full_name="o/r", fetched_at=T0 + timedelta(days=30))
    before = issues(40)
    write_snapshot(path, repo, before)
    analyze(path, cache, 33, capsys)
    full = tmp_path / "full"  # updated by parsing the whole snapshot, as before
    analyze(path, full, 33, capsys)
    (index_path(full, "o/r") / "issue-assistant-lines.bin").unlink()
    after = issues(50)  # ten new issues, and #7 retitled
    after[6] = after[6].model_copy(update={"title": "Problem 7 with parquet writing"})
    write_snapshot(path, repo, after)

    parsed: list[int] = []
    real = snapshot_mod.Issue

    class Counting:
        @staticmethod
        def model_validate(record: dict) -> Issue:
            parsed.append(record["number"])
            return real.model_validate(record)

    monkeypatch.setattr(snapshot_mod, "Issue", Counting)
    updated = analyze(path, cache, 48, capsys)
    assert sorted(parsed) == [7, *range(41, 51)]
    index = IssueIndex(index_path(cache, "o/r"))
    assert len(index) == 50 and index.stored(7).title == "Problem 7 with parquet writing"
    monkeypatch.undo()
    assert updated == analyze(path, full, 48, capsys)  # the same answer as a whole parse

    # a bad new line is still found, with its line number
    lines = gzip.decompress(path.read_bytes()).decode().splitlines()
    lines.append('{"kind": "issue", "number": 51, "title": 5}')
    path.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    args = ["analyze", "--snapshot", str(path), "--issue", "48", "--cache-dir", str(cache)]
    assert main([*args, "--labels", str(ROOT / "labels.toml")]) == 2
    assert f"{path}:{len(lines)}: field title" in capsys.readouterr().err


def test_a_warm_run_sees_the_releases_and_discussions_a_cold_run_sees(
    tmp_path, capsys, record_property
):
    """The second `analyze --snapshot` on the same cache reads no snapshot line: the releases
    and discussions come from what the first kept with the index (the same comment, the same
    context files)."""
    from issue_assistant.tracker.models import Discussion, Release

    path, cache = tmp_path / "s.jsonl", tmp_path / "cache"
    repo = Repository(
        full_name="o/r", fetched_at=T0 + timedelta(days=30), includes=["releases", "discussions"]
    )
    target = Issue(
        number=41,
        title="Parquet loading fails with error code 41",
        body="Loading parquet files fails with error code 41 since the upgrade.",
        user=User(login="user41"),
        created_at=T0 + timedelta(days=10),
    )
    releases = [
        Release(tag="v2.0.0", name="Two", published_at=T0 + timedelta(days=5), notes="Parquet."),
        Release(tag="v1.0.0", published_at=T0, notes="First."),
    ]
    discussion = Discussion(
        number=7,
        title="Parquet loading fails with an error code",
        body="Loading parquet files fails with an error code after the upgrade.",
        category="Q&A",
        created_at=T0 + timedelta(days=2),
        answer_chosen_at=T0 + timedelta(days=3),
        answer="Reinstall the parquet extra.",
    )
    others = [
        Discussion(
            number=n,
            title=f"Ideas for {t}",
            body=f"What about {t} support?",
            category="Ideas",
            created_at=T0 + timedelta(days=1),
        )
        for n, t in ((8, "audio"), (9, "images"), (10, "s3 buckets"))
    ]
    write_snapshot(
        path, repo, [*issues(40), target], releases=releases, discussions=[discussion, *others]
    )
    labels = str(ROOT / "labels.toml")

    def run(where: str) -> tuple[str, dict[str, str]]:
        FakeEngine.enqueue(Decision(questions=["Which version of the parquet extra?"]))
        context = tmp_path / where
        args = ["analyze", "--snapshot", str(path), "--issue", "41", "--labels", labels]
        args += ["--cache-dir", str(cache), "--engine", "fake", "--context-dir", str(context)]
        assert main(args) == 0
        files = {p.name: p.read_text() for p in sorted(context.iterdir()) if p.is_file()}
        return capsys.readouterr().out, files

    cold_comment, cold_files = run("cold")
    warm_comment, warm_files = run("warm")
    from tests.test_races_faults import record

    wrong = int(warm_comment != cold_comment) + int(warm_files != cold_files)
    record(record_property, "cache", wrong, 0, 0, kind="a warm run", where="analyze --snapshot")
    assert "v2.0.0" in cold_files["releases.md"] and "Discussion 7" in cold_files["discussions.md"]
    assert "discussion #7" in cold_comment  # "See also"
    assert warm_files == cold_files
    assert warm_comment == cold_comment
