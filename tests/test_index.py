"""The tantivy index: as-of filtering inside the query, title weight, incremental updates."""

from datetime import UTC, datetime, timedelta

import pytest

from issue_assistant.cli import main
from issue_assistant.index import IssueIndex
from issue_assistant.tracker.models import Issue, User


def make(number: int, title: str, body: str = "", day: int = 1, **kw) -> Issue:
    return Issue(
        number=number,
        title=title,
        body=body,
        user=User(login="u"),
        created_at=datetime(2024, 1, day, tzinfo=UTC),
        **kw,
    )


def test_as_of_filters_inside_the_query(hf_index, hf_snapshot):
    moment = hf_snapshot.get_issue(5000).created_at
    hits = hf_index.search("streaming parquet dataset", as_of=moment, limit=50)
    assert hits
    assert all(h.created_at < moment for h in hits)
    # Filtering after retrieval would return fewer than asked for; inside the query it fills up.
    assert len(hits) == 50


def test_pull_requests_excluded_unless_asked(hf_index):
    hits = hf_index.search("fix typo in documentation", limit=30)
    assert hits and not any(h.is_pull_request for h in hits)
    with_prs = hf_index.search("fix typo in documentation", limit=30, include_prs=True)
    assert any(h.is_pull_request for h in with_prs)


def test_title_matches_weigh_more(tmp_path):
    index = IssueIndex(tmp_path)
    index.update(
        [
            make(1, "Crash when saving", "the frobnicator module is mentioned here in the body"),
            make(2, "Frobnicator crash", "the body says nothing much about saving"),
        ]
    )
    hits = index.search("frobnicator")
    assert [h.number for h in hits] == [2, 1]


def test_incremental_update_and_reuse(tmp_path):
    index = IssueIndex(tmp_path)
    assert index.update([make(1, "alpha"), make(2, "beta")]) == 2
    assert index.update([make(1, "alpha"), make(2, "beta")]) == 0
    assert index.update([make(1, "alpha"), make(2, "gamma changed"), make(3, "delta")]) == 2
    reopened = IssueIndex(tmp_path)
    assert len(reopened) == 3
    assert [h.number for h in reopened.search("gamma")] == [2]
    assert reopened.search("beta") == []  # the old text of #2 was replaced, not duplicated
    assert len(reopened.search("alpha gamma delta", limit=10)) == 3


def test_similar_to_never_returns_the_issue_or_later_ones(tmp_path):
    index = IssueIndex(tmp_path)
    index.update(
        [
            make(1, "memory leak in loader", day=1),
            make(2, "memory leak in loader", day=2),
            make(3, "memory leak in loader", day=3),
        ]
    )
    hits = index.similar_to(make(2, "memory leak in loader", day=2))
    assert [h.number for h in hits] == [1]


def test_query_syntax_in_text_is_harmless(tmp_path):
    index = IssueIndex(tmp_path)
    index.update([make(1, "title AND body")])
    hits = index.search('title:"x" AND (body OR -) created_at:>2020 * ~ ^ "unclosed')
    assert [h.number for h in hits] == [1]
    assert index.search("") == []


def test_search_command_json(tmp_path, capsys):
    from tests.conftest import HF

    assert (
        main(
            [
                "search",
                "drop_duplicates pandas",
                "--snapshot",
                str(HF),
                "--limit",
                "3",
                "--as-of",
                "2024-07-01T09:02:06Z",
                "--json",
                "--cache-dir",
                str(tmp_path),
            ]
        )
        == 0
    )
    import json

    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert 1 <= len(rows) <= 3
    cutoff = datetime(2024, 7, 1, 9, 2, 6, tzinfo=UTC)
    for row in rows:
        assert datetime.fromisoformat(row["created_at"].replace("Z", "+00:00")) < cutoff
        assert {"number", "title", "state", "labels", "score"} <= set(row)
    with pytest.raises(SystemExit) as exc:
        main(["search", "x", "--snapshot", str(HF), "--as-of", "yesterday"])
    assert exc.value.code == 2
    assert main(["search", "  ", "--snapshot", str(HF), "--cache-dir", str(tmp_path)]) == 2
    assert "nothing to search for: give some words" in capsys.readouterr().err


def test_as_of_state_shown_in_search_command(tmp_path, capsys, hf_snapshot):
    from tests.conftest import HF

    closed = next(
        i
        for i in hf_snapshot.all_issues()
        if i.state == "closed"
        and not i.is_pull_request
        and i.closed_at - i.created_at > timedelta(days=30)
    )
    moment = (closed.created_at + timedelta(days=1)).isoformat()
    main(
        [
            "search",
            closed.title,
            "--snapshot",
            str(HF),
            "--as-of",
            moment,
            "--json",
            "--limit",
            "50",
            "--cache-dir",
            str(tmp_path),
        ]
    )
    import json

    out, err = capsys.readouterr()
    rows = {r["number"]: r for r in map(json.loads, out.splitlines())}
    assert rows[closed.number]["state"] == "open"
    assert "--as-of" not in err  # a moment the snapshot knows: no warning


def test_a_moment_after_the_snapshot_was_fetched_is_warned_of(tmp_path, capsys, hf_snapshot):
    from tests.conftest import HF, POETRY

    later = hf_snapshot.repository.fetched_at + timedelta(days=400)
    args = ["--as-of", later.isoformat(), "--cache-dir", str(tmp_path)]
    assert main(["search", "dataset", "--snapshot", str(HF), "--json", *args]) == 0
    fetched = hf_snapshot.repository.fetched_at.strftime("%Y-%m-%d %H:%M UTC")
    warning = f"is after the snapshot was fetched ({fetched}): its issues are as they were then"
    assert warning in capsys.readouterr().err
    report = tmp_path / "groups.md"
    backlog = ["backlog", "--duplicates", "--snapshot", str(POETRY), "--report", str(report)]
    assert main([*backlog, *args]) == 0
    assert "is after the snapshot was fetched (2025-03-28 00:31 UTC)" in capsys.readouterr().err


def test_identifiers_match_as_words_not_as_a_phrase(tmp_path):
    from issue_assistant.index.query import terms

    assert terms("Add a drop_duplicates method") == ["add", "drop", "duplicates", "method"]
    index = IssueIndex(tmp_path)
    index.update([make(1, "Can datasets remove duplicated rows?", "I want to drop them")])
    assert [h.number for h in index.search("`drop_duplicates` method")] == [1]


def test_kept_records_are_read_again_after_an_update(tmp_path):
    index = IssueIndex(tmp_path / "idx")
    first = make(1, "Loader crashes on parquet", "KeyError in the loader")
    index.update([first, make(2, "Docs typo", "a typo")])
    later = datetime(2024, 2, 1, tzinfo=UTC)
    index.ranked("loader parquet", before=later)
    assert index.stored(1).title == "Loader crashes on parquet"
    index.update([first.model_copy(update={"title": "Loader crashes on parquet files"})])
    index.ranked("loader parquet", before=later)
    assert index.stored(1).title == "Loader crashes on parquet files"


def test_a_warm_open_reads_no_per_issue_hashes_and_old_indexes_still_work(tmp_path):
    import json

    from issue_assistant.index.folder import HASHES, META

    issues = [make(n, f"Issue number {n}", "body text") for n in range(1, 6)]
    IssueIndex(tmp_path / "idx").update(issues)
    meta = json.loads((tmp_path / "idx" / META).read_text())
    assert "hashes" not in meta and meta["count"] == 5
    warm = IssueIndex(tmp_path / "idx")
    assert len(warm) == 5 and warm._hashes_loaded is None  # nothing O(n) read to open it
    assert warm.update(issues) == 0  # the hashes are read when updating, and match
    # an index written before the hashes had their own file
    old = dict(meta, hashes=json.loads((tmp_path / "idx" / HASHES).read_text()))
    del old["count"]
    (tmp_path / "idx" / META).write_text(json.dumps(old))
    (tmp_path / "idx" / HASHES).unlink()
    legacy = IssueIndex(tmp_path / "idx")
    assert len(legacy) == 5 and legacy.update(issues) == 0
    assert "hashes" not in json.loads((tmp_path / "idx" / META).read_text())  # migrated
    assert legacy.update([make(6, "A new one", "text")]) == 1 and len(legacy) == 6


def test_the_flat_word_query_ranks_as_the_query_parser(hf_index, hf_snapshot):
    """BM25 of plain words (with `^boost`) built as term queries: the parser's ranking, scores
    within float rounding, on the real issues' problem queries."""
    from issue_assistant.index.query import problem_query

    searcher = hf_index._searcher()
    compared = 0
    for issue in list(hf_snapshot.all_issues())[::97]:
        text = problem_query(issue.title, issue.body)
        if not text:
            continue
        parsed = hf_index.index.parse_query(text, ["title", "body"], field_boosts={"title": 2.0})
        ours = hf_index._words_query(text, ("title", "body"))
        a = searcher.search(parsed, limit=20).hits
        b = searcher.search(ours, limit=20).hits
        assert [s for s, _ in b] == pytest.approx([s for s, _ in a], rel=1e-5)
        docs = [searcher.doc(d)["number"][0] for _, d in b]
        assert docs == [searcher.doc(d)["number"][0] for _, d in a]
        compared += 1
    assert compared > 50


def test_the_as_of_filter_adds_nothing_to_the_bm25_score(tmp_path):
    """Two segments, the moment inside the second: an issue's score is its BM25 alone,
    whichever segment holds it and whatever the moment (a required range scored 1.0 in a
    segment it covered only in part)."""
    index = IssueIndex(tmp_path)
    index.update([make(n, f"loader crash {n}", "the loader crashes", day=n) for n in (1, 2, 3)])
    index.update([make(n, f"loader crash {n}", "the loader crashes", day=n) for n in (4, 5, 6)])
    assert index._searcher().num_segments == 2
    late = dict(index.ranked("loader crashes", before=datetime(2024, 2, 1, tzinfo=UTC)))
    then = dict(index.ranked("loader crashes", before=datetime(2024, 1, 5, tzinfo=UTC)))
    assert sorted(then) == [1, 2, 3, 4]
    assert then == pytest.approx({n: late[n] for n in then}, rel=1e-6)
    hits = index.search("loader crashes", as_of=datetime(2024, 1, 5, tzinfo=UTC))
    assert {h.number: h.score for h in hits} == pytest.approx(then, rel=1e-6)
