"""The context tools (releases, discussions, likely files) on the synthetic `tinyparse` data:
offered only where the moment knows them, and as of the moment."""

from __future__ import annotations

from issue_assistant.tools import Toolbox
from tests import contextdata as data
from tests.contextdata import tinyparse_checkout  # noqa: F401 (the checkout fixture)
from tests.test_context_repo import config_for, run


def box_for(tmp_path, checkout_dir, number: int = 5) -> Toolbox:
    analysis = run(data.snapshot(), number, config_for(checkout_dir), tmp_path)
    return Toolbox.for_context(analysis.context)


def test_context_tools_are_offered_where_the_moment_knows_them(tmp_path, checkout) -> None:
    names = box_for(tmp_path, checkout).names()
    assert {"list_releases", "search_discussions", "likely_files"} <= set(names)
    without = box_for(tmp_path / "none", None).names()
    assert "likely_files" not in without and "list_releases" in without


def test_list_releases_shows_only_the_releases_of_the_moment(tmp_path, checkout) -> None:
    box = box_for(tmp_path, checkout)
    text = box.call("list_releases", {"limit": 5}).text
    assert text.index("v1.2.0") < text.index("v1.1.0") < text.index("v1.0.0")
    early = box_for(tmp_path / "early", checkout, number=1).call("list_releases", {}).text
    assert "v1.2.0" not in early


def test_search_discussions_hides_a_later_answer(tmp_path, checkout) -> None:
    box = box_for(tmp_path, checkout)
    text = box.call("search_discussions", {"text": "configure the cache directory"}).text
    assert text.startswith("discussion #50")
    # 52 was answered on day 40, after issue 5 (day 35): unanswered, its answer not shown
    text = box.call("search_discussions", {"text": "parser crash on an empty token stream"}).text
    line = next(x for x in text.splitlines() if x.startswith("discussion #52"))
    assert "[unanswered" in line and "Fixed in 1.2.0" not in text


def test_likely_files_and_bad_input(tmp_path, checkout) -> None:
    box = box_for(tmp_path, checkout)
    frame = 'File "src/tinyparse/parser.py", line 12, in parse_tokens'
    result = box.call("likely_files", {"text": frame})
    assert not result.is_error and result.text.startswith("src/tinyparse/parser.py:12")
    bad = box.call("likely_files", {"text": 5, "limit": "many"})
    assert bad.is_error and "text" in bad.text
