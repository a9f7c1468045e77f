"""The parts of a webhook payload the Action reads, validated (pydantic) before anything is done.

Only the fields used are declared; anything else in the payload is ignored. A payload with the
wrong shape (a string or list where an object is expected, a bad issue number or time) is a
`UserError` naming the event file and the field, so the run ends with one line and exit 2.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr
from pydantic import ValidationError as _ValidationError

from issue_assistant.errors import UserError
from issue_assistant.tracker.models import Issue, User

T = TypeVar("T", bound=BaseModel)
IssueNumber = Annotated[StrictInt, Field(gt=0, lt=2**31)]


class _Part(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class WebhookUser(_Part):
    login: StrictStr = ""
    type: StrictStr = "User"


class WebhookLabel(_Part):
    name: StrictStr


class WebhookIssue(_Part):
    number: IssueNumber
    title: StrictStr | None = ""
    user: WebhookUser | None = None
    created_at: datetime | None = None
    labels: list[WebhookLabel] = Field(default_factory=list)
    pull_request: dict[str, Any] | None = None

    def to_issue(self, now: datetime) -> Issue:
        """Our issue record from the payload's copy (for the skip checks, no API call)."""
        user = self.user or WebhookUser()
        return Issue(
            number=self.number,
            title=self.title or "",
            user=User(login=user.login, type=user.type or "User"),
            created_at=self.created_at or now,
            labels=[lab.name for lab in self.labels],
            is_pull_request=self.pull_request is not None,
        )


class WebhookComment(_Part):
    body: StrictStr | None = None
    user: WebhookUser | None = None


class IssuesPayload(_Part):
    """An `issues` event (or any event `analyze` runs on): the issue, when there is one."""

    action: StrictStr | None = None
    issue: WebhookIssue | None = None


class CommentPayload(_Part):
    """An `issue_comment` event: the comment and the issue it was made on."""

    issue: WebhookIssue
    comment: WebhookComment


def _describe(exc: _ValidationError) -> str:
    err = exc.errors()[0]
    field = ".".join(str(p) for p in err["loc"]) or "(the payload)"
    got = err.get("input")
    shown = type(got).__name__ if isinstance(got, dict | list) else repr(got)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    return f"field {field}: {err['msg'].lower()} (got {shown})"


def parse_payload(model: type[T], data: Any, where: str) -> T:
    """`data` validated as `model`; a UserError naming `where` and the field otherwise."""
    if not isinstance(data, dict):
        kind = type(data).__name__
        raise UserError(f"the event payload must be a JSON object, not {kind}", where=where)
    try:
        return model.model_validate(data)
    except _ValidationError as exc:
        raise UserError(_describe(exc), where=where) from None
