"""The one vote rule, used by `analyze` (to leave a voted comment alone) and by `apply`.

A vote is a 👍/👎 reaction on the assistant's comment, or a `/assistant approve|dismiss` command
on its own line (outside code, quotes and lists) in a later comment. It counts only when:

- its author's role on the repository is in `approval.roles` (and it is not the bot itself);
- it was given on the text now in the comment: once the comment was edited (a re-analysis,
  or anyone with write access), a vote from before the edit (GitHub's `updated_at`, in seconds)
  was for an older text and does not count; and one from the *same second* as the edit counts
  for neither text, since GitHub cannot say which came first. `analyze` reads the votes again
  after its edit and says in the comment when one was set aside (`Plan.set_aside`), so the
  maintainer votes again. (A reaction does not move the comment's `updated_at`: it is a record
  of its own.)

While no vote counts, `apply` says in the comment which ones did not and why
(`VoteRule.shown_uncounted`, `Plan.not_counted`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Literal

from markdown_it import MarkdownIt

from issue_assistant.comment import UNCOUNTED_MAX, Plan, Uncounted
from issue_assistant.config.sections import ROLES
from issue_assistant.errors import GitHubError
from issue_assistant.tracker.models import Comment

log = logging.getLogger(__name__)

Action = Literal["approve", "dismiss"]
REACTIONS: dict[str, Action] = {"+1": "approve", "-1": "dismiss"}
_LINE = re.compile(r"/assistant[ \t]+(approve|dismiss)(?![\w-])", re.IGNORECASE)


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark")


def slash_command(body: str | None) -> Action | None:
    """'approve' or 'dismiss' when a line of a top-level paragraph starts with the command.

    Fenced and indented code, quotes (`>`), lists and HTML never count: the text is parsed
    as Markdown, as GitHub shows it.
    """
    if not body or "/assistant" not in body.lower():
        return None
    for token in _parser().parse(body):
        if token.type != "inline" or token.level != 1:
            continue  # level 1: the inline text of a paragraph that is not nested
        for line in token.content.splitlines():
            match = _LINE.match(line.strip())
            if match:
                return match.group(1).lower()  # type: ignore[return-value]
    return None


@dataclass
class Vote:
    action: Action
    actor: str
    at: datetime
    via: str

    @property
    def said(self) -> str:
        """The vote in words a maintainer reads ("a 👍", "`/assistant approve`")."""
        if self.via.endswith("reaction"):
            return "a 👍" if self.action == "approve" else "a 👎"
        return f"`{self.via}`"


def shown_since(comment: Comment) -> datetime | None:
    """When the comment's current text was written, if it was edited after being posted."""
    if comment.updated_at is not None and comment.updated_at > comment.created_at:
        return comment.updated_at
    return None


def counts_for(vote: Vote, comment: Comment) -> bool:
    """Whether `vote` was given on the comment's current text: after its last edit, strictly
    (a vote in the edit's second may have been meant for the text before)."""
    edited = shown_since(comment)
    return edited is None or vote.at > edited


class VoteRule:
    """Who may decide (roles looked up once per login) and which votes count."""

    def __init__(
        self,
        permission: Callable[[str], str],
        roles: Iterable[str],
        bot_login: str,
    ) -> None:
        self._permission = permission
        self.roles = frozenset(roles)
        self.bot = bot_login
        self._cache: dict[str, str] = {}

    def role(self, login: str) -> str:
        key = login.lower()
        if key not in self._cache:
            try:
                self._cache[key] = self._permission(login)
            except GitHubError as exc:
                if exc.status != 404:
                    raise
                self._cache[key] = "none"
        return self._cache[key]

    def may_decide(self, login: str) -> bool:
        if login.lower() == self.bot.lower():
            return False
        return self.role(login) in self.roles

    def candidates(
        self, comment: Comment, reactions: Iterable, comments: Iterable[Comment], now: datetime
    ) -> list[Vote]:
        """Every vote-shaped reaction or command on `comment`, earliest first (not yet checked)."""
        votes: list[Vote] = []
        for r in reactions:
            action = REACTIONS.get(r.content)
            if action:
                at = r.created_at or now
                votes.append(Vote(action, r.user.login, at, f"{r.content} reaction"))
        for c in comments:
            if c.id == comment.id or c.created_at < comment.created_at:
                continue
            action = slash_command(c.body)
            if action:
                votes.append(Vote(action, c.user.login, c.created_at, f"/assistant {action}"))
        return sorted(votes, key=lambda v: v.at)

    def first_vote(
        self, comment: Comment, reactions: Iterable, comments: Iterable[Comment], now: datetime
    ) -> Vote | None:
        """The earliest vote that counts; the others are logged and ignored."""
        edited = shown_since(comment)
        for vote in self.candidates(comment, reactions, comments, now):
            if not counts_for(vote, comment):
                log.info(
                    "ignored %s by %s: given before the proposal was last changed, or in the "
                    "same second (%s)",
                    vote.via,
                    vote.actor,
                    edited.isoformat() if edited else "",
                )
                continue
            if self.may_decide(vote.actor):
                return vote
            log.info("ignored %s by %s (not a maintainer)", vote.via, vote.actor)
        return None

    def roles_said(self) -> str:
        """The roles that decide, in words: the least of them when every higher one decides
        too ("triage"), else each ("maintain or admin" is also "maintain")."""
        ordered = [r for r in ROLES if r in self.roles]
        if ordered and ordered == list(ROLES[ROLES.index(ordered[0]) :]):
            return ordered[0]
        return " or ".join(ordered) or "maintainer"

    def uncounted(
        self, comment: Comment, reactions: Iterable, comments: Iterable[Comment], now: datetime
    ) -> list[tuple[Vote, Literal["role", "earlier"]]]:
        """Each vote on `comment` that did not count, earliest first, with why: "role" (its
        author has none of the roles that decide, whenever it was given) or "earlier" (given
        before the text was last changed, or in that second)."""
        out: list[tuple[Vote, Literal["role", "earlier"]]] = []
        for vote in self.candidates(comment, reactions, comments, now):
            if vote.actor.lower() == self.bot.lower():
                continue
            if not self.may_decide(vote.actor):
                out.append((vote, "role"))
            elif not counts_for(vote, comment):
                out.append((vote, "earlier"))
        return out

    def not_counted(
        self, comment: Comment, reactions: Iterable, comments: Iterable[Comment], now: datetime
    ) -> list[str]:
        """Why each vote on `comment` did not count, one plain sentence each (for the status
        of a proposal still waiting: "a 👍 from @x was not counted: no triage role")."""
        words = {
            "role": f"no {self.roles_said()} role",
            "earlier": "it came before the proposal was last changed, so vote again",
        }
        return [
            f"{vote.said} from @{vote.actor} was not counted: {words[why]}"
            for vote, why in self.uncounted(comment, reactions, comments, now)
        ]

    def shown_uncounted(
        self,
        plan: Plan,
        comment: Comment,
        reactions: Iterable,
        comments: Iterable[Comment],
        now: datetime,
    ) -> list[Uncounted]:
        """The votes the pending comment says did not count (`Plan.not_counted`): those it
        already asks again for ("Please vote again", `Plan.set_aside`) aside."""
        asked = {(v.actor.lower(), v.via) for v in plan.set_aside}
        return [
            Uncounted(
                actor=vote.actor,
                via=vote.via,
                why=why,
                roles=self.roles_said() if why == "role" else "",
            )
            for vote, why in self.uncounted(comment, reactions, comments, now)
            if (vote.actor.lower(), vote.via) not in asked
        ][:UNCOUNTED_MAX]

    def set_aside(
        self,
        before: Comment,
        after: Comment,
        reactions: Iterable,
        comments: Iterable[Comment],
        now: datetime,
    ) -> list[Vote]:
        """Maintainers' votes that counted for the text `before` an edit and do not count for
        the text `after` it: they came in while it was being edited, so no text had them."""
        return [
            v
            for v in self.candidates(after, reactions, comments, now)
            if counts_for(v, before) and not counts_for(v, after) and self.may_decide(v.actor)
        ]
