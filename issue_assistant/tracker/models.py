"""The tracker's records: issues, events, comments and the repository, as in the snapshot format.

Every time carries its timezone (`AwareDatetime`): a naive one in a snapshot is an error naming
its line, not a comparison that fails later."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AwareDatetime, BaseModel, BeforeValidator, ConfigDict, Field

MAINTAINER_ASSOCIATIONS = frozenset({"OWNER", "MEMBER", "COLLABORATOR"})


def _utf8(value: Any) -> Any:
    """Text that UTF-8 can hold: a lone surrogate (JSON's `\\ud800`) becomes U+FFFD."""
    if isinstance(value, str) and not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    return value


Text = Annotated[str, BeforeValidator(_utf8)]


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
    created_at: AwareDatetime
    actor: User | None = None
    label: str | None = None
    state_reason: str | None = None
    canonical: int | None = None
    # `renamed`: the title before and after (GitHub's `rename.from` and `rename.to`).
    rename_from: Text | None = None
    rename_to: Text | None = None


class Comment(BaseModel):
    user: User
    created_at: AwareDatetime
    body: Text = ""
    author_association: str | None = None
    id: int | None = None
    url: str | None = None
    updated_at: AwareDatetime | None = None  # set by an edit (GitHub's `updated_at`)


class LabelInfo(BaseModel):
    name: str
    description: str | None = None
    color: str | None = None


class FixedBy(BaseModel):
    """A pull request that closed the issue ("Fixes #N"), with the files it changed."""

    number: int
    files: list[str] = Field(default_factory=list)


class Issue(BaseModel):
    """An issue or pull request. `events`/`comments`: None when unknown, [] when there were none."""

    number: int
    title: Text
    body: Text | None = ""
    user: User
    author_association: str | None = None
    created_at: AwareDatetime
    closed_at: AwareDatetime | None = None
    state: Literal["open", "closed"] = "open"
    state_reason: str | None = None
    labels: list[str] = Field(default_factory=list)
    is_pull_request: bool = False
    events: list[Event] | None = None
    comments: list[Comment] | None = None
    duplicate_of: int | None = None
    updated_at: AwareDatetime | None = None
    fixed_by: list[FixedBy] | None = None
    locked: bool | None = None  # True when GitHub says so; None (unknown or unlocked) is left out

    @property
    def text(self) -> str:
        return f"{self.title}\n\n{self.body or ''}"


class Repository(BaseModel):
    """Line 1 of a snapshot: the repository, its label set and maintainers."""

    kind: Literal["repository"] = "repository"
    version: int = 1
    full_name: str
    fetched_at: AwareDatetime
    labels: list[LabelInfo] = Field(default_factory=list)
    maintainers: list[str] | None = None
    # Optional line kinds whose list is complete in this snapshot ("releases", "discussions",
    # "fixed_by"); a kind not named here may be absent because it was never fetched.
    includes: list[str] = Field(default_factory=list)

    def is_maintainer(self, login: str, association: str | None = None) -> bool:
        if self.maintainers is not None:
            return login in self.maintainers
        return association in MAINTAINER_ASSOCIATIONS


class Reaction(BaseModel):
    """A reaction on a comment: who, which ('+1', '-1', 'eyes', ...) and when."""

    user: User
    content: str
    created_at: AwareDatetime | None = None
    id: int | None = None


class Claim(BaseModel):
    """The bot's 👀 on a comment, held by one `apply` run while it writes (`new`: made now)."""

    id: int
    new: bool
    created_at: AwareDatetime | None = None


NOTES_LIMIT = 2000


class Release(BaseModel):
    """A published release: its tag, name, when, and the start of its notes."""

    kind: Literal["release"] = "release"
    tag: str
    name: str | None = None
    published_at: AwareDatetime
    notes: str = ""
    prerelease: bool = False

    @property
    def title(self) -> str:
        return self.name or self.tag


class Discussion(BaseModel):
    """A GitHub discussion; `answer_chosen_at` is when an answer was marked (Q&A categories)."""

    kind: Literal["discussion"] = "discussion"
    number: int
    title: str
    body: str = ""
    category: str | None = None
    user: User | None = None
    created_at: AwareDatetime
    answer_chosen_at: AwareDatetime | None = None
    answer: str | None = None
    closed: bool = False
    closed_at: AwareDatetime | None = None
    locked: bool = False

    @property
    def text(self) -> str:
        return f"{self.title}\n\n{self.body or ''}"

    @property
    def answered(self) -> bool:
        return self.answer_chosen_at is not None


def excerpt(text: str | None, limit: int = NOTES_LIMIT) -> str:
    """`text` cut at a line or word boundary to at most `limit` characters."""
    text = (text or "").strip()
    if len(text) <= limit:
        return text
    cut = text[:limit]
    for sep in ("\n", " "):
        at = cut.rfind(sep)
        if at > limit // 2:
            cut = cut[:at]
            break
    return cut.rstrip() + " …"
