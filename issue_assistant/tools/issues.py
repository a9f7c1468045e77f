"""Tools over the issues and labels as they were at the moment: search, read one, list labels."""

from __future__ import annotations

from pydantic import Field, field_validator

from issue_assistant.render import render
from issue_assistant.tools.base import Toolbox, ToolFailure, ToolInput, tool

SEARCH_MIN, SEARCH_MAX, SEARCH_DEFAULT = 3, 20, 8
BODY_LIMIT = 3000
COMMENTS_SHOWN = 10
COMMENT_LIMIT = 500


def clip(text: str | None, limit: int) -> str:
    """`text` cut to `limit` characters (line breaks kept), marked when cut."""
    text = (text or "").strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


class SearchIssuesInput(ToolInput):
    query: str = Field(min_length=1, max_length=500, description="words to look for")
    limit: int = Field(
        default=SEARCH_DEFAULT,
        description=f"how many results, {SEARCH_MIN} to {SEARCH_MAX} (others are clamped)",
        json_schema_extra={"minimum": SEARCH_MIN, "maximum": SEARCH_MAX},
    )

    @field_validator("limit")
    @classmethod
    def _clamp(cls, value: int) -> int:
        return max(SEARCH_MIN, min(value, SEARCH_MAX))


class GetIssueInput(ToolInput):
    number: int = Field(ge=1, description="the issue number")


class NoInput(ToolInput):
    pass


@tool("search_issues", SearchIssuesInput)
def search_issues(box: Toolbox, args: SearchIssuesInput) -> str:
    """Search the repository's earlier issues as they were at the moment (title matches weigh
    more). Returns one line per issue: number, state, title, labels and an excerpt."""
    found = box.moment.search(args.query, args.limit, box.issue)
    box.shown.update(c.issue.number for c in found)
    return render("tools/search_issues.txt.j2", found=found)


@tool("get_issue", GetIssueInput)
def get_issue(box: Toolbox, args: GetIssueInput) -> str:
    """Read one earlier issue as it was at the moment: state, labels, description and the first
    comments."""
    issue = box.moment.get_issue(args.number, box.issue)
    if issue is None:
        raise ToolFailure(f"no earlier issue #{args.number}")
    box.shown.add(issue.number)
    comments = [
        c.model_copy(update={"body": clip(c.body, COMMENT_LIMIT)})
        for c in (issue.comments or [])[:COMMENTS_SHOWN]
    ]
    return render(
        "tools/get_issue.txt.j2",
        issue=issue.model_copy(update={"body": clip(issue.body, BODY_LIMIT)}),
        comments=comments,
    )


@tool("list_labels", NoInput)
def list_labels(box: Toolbox, args: NoInput) -> str:
    """List the label groups that may be proposed (type, area, topic, priority) with their
    descriptions, and the repository's other labels."""
    labels = box.moment.labels
    known = {name.lower() for name in labels.all_names()}
    used = _used_by_the_moment(box)
    others = sorted(
        (
            lab.name
            for lab in box.moment.tracker.repository.labels
            if lab.name.lower() not in known and (used is None or lab.name.lower() in used)
        ),
        key=str.lower,
    )
    return render("tools/list_labels.txt.j2", labels=labels, others=others)


def _used_by_the_moment(box: Toolbox) -> set[str] | None:
    """Labels some issue carried by the moment of a point-in-time view (lower case), or None
    on a live view: a label first used later is not shown (the repository's list is today's)."""
    tracker = box.moment.tracker
    view = tracker.point_in_time
    if view is None:
        return None
    moment = view.moment
    cached = box.labels_used
    if cached is None:
        cached = set()
        for issue in tracker.all_issues():  # each as it was at the moment
            cached.update(name.lower() for name in issue.labels)
            for ev in issue.events or []:
                if ev.event == "labeled" and ev.label and ev.created_at <= moment:
                    cached.add(ev.label.lower())
        box.labels_used = cached
    return cached
