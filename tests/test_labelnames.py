"""Label names compared as GitHub compares them: without regard to case."""

from issue_assistant.labelnames import find_label, has_label, missing


def test_names_match_in_any_casing():
    assert has_label(["Bug", "docs"], "bug") and not has_label(["bugs"], "bug")
    assert find_label(["Bug", "docs"], "BUG") == "Bug" and find_label(["docs"], "bug") is None


def test_missing_names_are_those_the_labels_lack_and_none_when_the_labels_are_unknown():
    assert missing(["bug", "Docs", "p2"], ["BUG", "docs", "area/cli"]) == ["p2"]
    assert missing(["bug", "p2"], []) == []  # a repository whose labels are not known
