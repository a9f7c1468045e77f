"""The reliability page is made from what the tests recorded, and failures become findings."""

from __future__ import annotations

import json

from tests import reliability


def _case(name: str, data: dict, failure: str | None = None) -> str:
    prop = json.dumps(data).replace('"', "&quot;")
    fail = f'<failure message="{failure}">trace</failure>' if failure else ""
    return (
        f'<testcase classname="tests.test_x" name="{name}"><properties>'
        f'<property name="reliability" value="{prop}"/></properties>{fail}</testcase>'
    )


def test_properties_are_added_up_by_category_and_failures_are_findings(tmp_path):
    base = {"cases": 1, "wrong_writes": 0, "doubled_writes": 0, "tracebacks": 0}
    cases = [
        _case("a", {**base, "category": "fault", "kind": "500", "where": "apply: labels"}),
        _case(
            "b",
            {
                **base,
                "category": "fault",
                "kind": "500",
                "where": "apply: edit",
                "doubled_writes": 1,
            },
            failure="assert 2 == 1",
        ),
        _case("c", {**base, "category": "generated", "cases": 200}),
        '<testcase classname="tests.test_x" name="plain"/>',
    ]
    junit = tmp_path / "r.xml"
    junit.write_text(f"<testsuites><testsuite>{''.join(cases)}</testsuite></testsuites>")
    categories, findings, ran = reliability.aggregate(junit)
    assert ran == 4
    assert [c.name for c in categories] == ["generated", "fault"]  # in the contract's order
    fault = categories[1]
    assert fault.tests == 2 and fault.failed == 1 and fault.totals["doubled_writes"] == 1
    assert fault.cell("500", "apply: edit") == "✗" and fault.cell("500", "apply: labels") == "✓"
    assert categories[0].totals["cases"] == 200
    assert [f.test for f in findings] == ["tests.test_x::b"]
    page = tmp_path / "page.md"
    assert reliability.main(["--junit", str(junit), "-o", str(page)]) == 1  # findings: status 1
    text = page.read_text()
    assert "| network faults | 2 | 2 | 0 | 1 | 0 | 0 | 1 |" in text
    assert "`tests.test_x::b`: assert 2 == 1" in text
    assert "python -m tests.reliability" in text


def test_the_reliability_files_are_found_by_the_property_name():
    names = {p.name for p in reliability.reliability_files()}
    assert {"test_races_faults.py", "test_malformed_inputs.py"} <= names
    issue_27 = {"test_repo_changes.py", "test_cache_integrity.py", "test_hostile_names.py"}
    assert issue_27 | {"test_mcp_bounds.py", "test_untrusted_names.py"} <= names
    assert "test_reliability_report.py" not in names
