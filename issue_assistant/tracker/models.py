"""The tracker's records: issues, events, comments and the repository, as in the snapshot format."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

MAINTAINER_ASSOCIATIONS = frozenset({"OWNER", "MEMBER", "COLLABORATOR"})


class User(BaseModel):
    model_config = ConfigDict(frozen=True)

    login: str
    type: str = "User"

    @property
    def is_bot(self) -> bool:
        return self.type == "Bot" or self.login.endswith("[bot]")


class Event(BaseModel):
    """A timeline event: labeled, unlabeled, closed, reopened, marked_as_duplicate, ..."""

    event: str
    created_at: datetime
    actor: User | None = None
    label: str | None = None
    state_reason: str | None = None
    canonical: int | None = None


class Comment(BaseModel):
    user: User
    created_at: datetime
    body: str = ""
    author_association: str | None = None
    id: int | None = None
    url: str | None = None
    updated_at: datetime | None = None  # set by an edit (GitHub's `updated_at`)


class LabelInfo(BaseModel):
    name: str
    description: str | None = None
    color: str | None = None


class Issue(BaseModel):
    """An issue or pull request. `events`/`comments`: None when unknown, [] when there were none."""

    number: int
    title: str
    body: str | None = ""
    user: User
    author_association: str | None = None
    created_at: datetime
    closed_at: datetime | None = None
    state: Literal["open", "closed"] = "open"
    state_reason: str | None = None
    labels: list[str] = Field(default_factory=list)
    is_pull_request: bool = False
    events: list[Event] | None = None
    comments: list[Comment] | None = None
    duplicate_of: int | None = None
    updated_at: datetime | None = None

    @property
    def text(self) -> str:
        return f"{self.title}\n\n{self.body or ''}"


class Repository(BaseModel):
    """Line 1 of a snapshot: the repository, its label set and maintainers."""

    kind: Literal["repository"] = "repository"
    version: int = 1
    full_name: str
    fetched_at: datetime
    labels: list[LabelInfo] = Field(default_factory=list)
    maintainers: list[str] | None = None

    def is_maintainer(self, login: str, association: str | None = None) -> bool:
        if self.maintainers is not None:
            return login in self.maintainers
        return association in MAINTAINER_ASSOCIATIONS


class Reaction(BaseModel):
    """A reaction on a comment: who, which ('+1', '-1', 'eyes', ...) and when."""

    user: User
    content: str
    created_at: datetime | None = None
    id: int | None = None


class Claim(BaseModel):
    """The bot's 👀 on a comment, held by one `apply` run while it writes (`new`: made now)."""

    id: int
    new: bool
    created_at: datetime | None = None
