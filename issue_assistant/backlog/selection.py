"""Which open issues the backlog run takes, in which order, and which rule skips the others.

`select` works on the index's stored records (no request): open issues lacking a label of a
`[backlog] groups` group, those lacking the first group first, oldest (or newest) first.
`Recheck` looks again at one issue's fresh record and comments right before it is analyzed
(the live path's `skip` hook): an assistant comment already there, a lock, a maintainer's recent
answer. `with_discussion` is the issue as the engine reads it: its discussion so far attached.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from issue_assistant.backlog.state import BacklogState
from issue_assistant.comment import is_assistant_comment
from issue_assistant.config.labels import GROUPS, Group, LabelsConfig
from issue_assistant.config.sections import Config
from issue_assistant.errors import UserError
from issue_assistant.labelnames import has_label
from issue_assistant.live import skip_reason
from issue_assistant.tracker.models import Comment, Issue, Repository, excerpt

# The discussion the engine reads: the newest comments, each cut to this many characters.
DISCUSSION_COMMENTS = 20
COMMENT_CHARS = 2000


@dataclass(frozen=True)
class Skipped:
    """An open, untriaged issue left alone, and the rule that says so."""

    number: int
    title: str
    rule: str  # bot, locked, opt-out, pending, proposed, answered, assistant, labelled, closed
    reason: str


@dataclass
class Selection:
    """The issues to analyze, in order, with the groups each lacks; and those skipped."""

    todo: list[Issue] = field(default_factory=list)
    missing: dict[int, list[str]] = field(default_factory=dict)
    skipped: list[Skipped] = field(default_factory=list)
    groups: list[Group] = field(default_factory=list)  # the groups checked


def checked_groups(
    labels: LabelsConfig, config: Config, issues: list[Issue] | None = None
) -> list[Group]:
    """`[backlog] groups` that labels.toml has labels for (a UserError when none has); unset,
    the groups the open `issues` lack (the type first; with no issue, every group with labels)."""
    if config.backlog.groups is None:
        open_ = [i.labels for i in issues or [] if i.state == "open" and not i.is_pull_request]
        found = labels.lacking(open_) if open_ else []
        groups = found or [g for g in GROUPS if labels.proposable(g)]  # type: ignore[arg-type]
        if not groups:
            raise UserError("labels.toml has no label to propose")
        return groups  # type: ignore[return-value]
    groups = [g for g in config.backlog.groups if labels.group(g)]
    if not groups:
        names = ", ".join(config.backlog.groups)
        raise UserError(f"[backlog] groups ({names}): labels.toml has no label in any of them")
    return groups


def missing_groups(issue: Issue, labels: LabelsConfig, groups: list[Group]) -> list[str]:
    """The groups of `groups` the issue has no label of."""
    have = {labels.group_of(name) for name in issue.labels}
    return [g for g in groups if g not in have]


def _cheap_skip(issue: Issue, config: Config, state: BacklogState, now: datetime) -> Skipped | None:
    """A rule that skips the issue on its stored record and the run's state alone."""

    def skipped(rule: str, reason: str) -> Skipped:
        return Skipped(issue.number, issue.title, rule, reason)

    if issue.user.is_bot:
        return skipped("bot", f"opened by a bot ({issue.user.login})")
    if issue.locked:
        return skipped("locked", "the conversation is locked")
    if has_label(issue.labels, config.approval.opt_out_label):
        return skipped("opt-out", f"has the opt-out label {config.approval.opt_out_label!r}")
    if has_label(issue.labels, config.approval.pending_label):
        return skipped("pending", f"has {config.approval.pending_label!r}: a proposal waits")
    if reason := skip_reason(issue, config):
        return skipped("other", reason)
    done = state.outcome(issue.number, now)
    if done is not None:
        return skipped(done.rule, done.reason)
    return None


def select(
    issues: Iterable[Issue],
    labels: LabelsConfig,
    config: Config,
    state: BacklogState,
    now: datetime,
    order: str | None = None,
) -> Selection:
    """The open issues lacking a label of `[backlog] groups`, ordered, with the skipped ones."""
    issues = list(issues)
    groups = checked_groups(labels, config, issues)
    newest = (order or config.backlog.order) == "newest"
    out = Selection(groups=groups)
    chosen: list[tuple[int, Issue]] = []
    for issue in issues:
        if issue.is_pull_request or issue.state != "open":
            continue
        missing = missing_groups(issue, labels, groups)
        if not missing:
            continue
        skip = _cheap_skip(issue, config, state, now)
        if skip is not None:
            out.skipped.append(skip)
            continue
        out.missing[issue.number] = missing
        chosen.append((groups.index(missing[0]), issue))  # type: ignore[arg-type]

    def when(issue: Issue) -> float:
        stamp = issue.created_at.timestamp()
        return -stamp if newest else stamp

    chosen.sort(key=lambda pair: (pair[0], when(pair[1]), pair[1].number))
    out.todo = [issue for _, issue in chosen]
    out.skipped.sort(key=lambda s: s.number)
    return out


@dataclass
class Recheck:
    """The live path's `skip` hook: the rules that need the issue's fresh record and comments
    (`groups` empty: a duplicate proposal, whatever labels the issue has).

    What skipped an issue (and until when, for a maintainer's answer) is kept in `found`."""

    labels: LabelsConfig
    config: Config
    repository: Repository
    groups: list[Group]
    now: datetime
    started: set[int] = field(default_factory=set)  # proposals an earlier run left unfinished
    found: dict[int, tuple[Skipped, datetime | None]] = field(default_factory=dict)

    def __call__(self, issue: Issue, comments: list[Comment]) -> str | None:
        skip = self.check(issue, comments)
        return skip.reason if skip is not None else None

    def check(self, issue: Issue, comments: list[Comment]) -> Skipped | None:
        until: datetime | None = None

        def skipped(rule: str, reason: str) -> Skipped:
            found = Skipped(issue.number, issue.title, rule, reason)
            self.found[issue.number] = (found, until)
            return found

        if issue.state != "open":
            return skipped("closed", "closed meanwhile")
        if issue.locked:
            return skipped("locked", "the conversation is locked")
        if self.groups and not missing_groups(issue, self.labels, self.groups):
            return skipped("labelled", "labelled meanwhile")
        bot = self.config.approval.bot_login.lower()
        own = any(c.user.login.lower() == bot and is_assistant_comment(c.body) for c in comments)
        if own and not self.unfinished(issue):
            return skipped("assistant", "has an assistant comment already")
        answer = self.maintainer_answer(issue, comments)
        if answer is not None:
            days = self.config.backlog.answered_days
            until = answer.created_at + timedelta(days=days)
            return skipped(
                "answered",
                f"a maintainer ({answer.user.login}) answered on "
                f"{answer.created_at:%Y-%m-%d}, within [backlog] answered_days = {days}",
            )
        return None

    def unfinished(self, issue: Issue) -> bool:
        """An earlier backlog run posted the comment and stopped before the pending label: the
        live path finishes it (the label; an edit only if the proposal changed)."""
        pending = self.config.approval.pending_label
        return issue.number in self.started and not has_label(issue.labels, pending)

    def maintainer_answer(self, issue: Issue, comments: list[Comment]) -> Comment | None:
        """The latest comment by a maintainer other than the reporter, when it is recent."""
        days = self.config.backlog.answered_days
        if days <= 0:
            return None
        bot = self.config.approval.bot_login.lower()
        answers = [
            c
            for c in comments
            if not c.user.is_bot
            and c.user.login.lower() not in (bot, issue.user.login.lower())
            and self.repository.is_maintainer(c.user.login, c.author_association)
        ]
        if not answers:
            return None
        latest = max(answers, key=lambda c: c.created_at)
        return latest if self.now - latest.created_at < timedelta(days=days) else None


def with_discussion(issue: Issue, comments: list[Comment], bot_login: str) -> Issue:
    """The issue as the engine reads it now: its people's comments so far attached (the newest
    `DISCUSSION_COMMENTS`, each cut to `COMMENT_CHARS`); bots' and the assistant's left out."""
    people = [
        c.model_copy(update={"body": excerpt(c.body, COMMENT_CHARS)})
        for c in sorted(comments, key=lambda c: c.created_at)
        if not c.user.is_bot
        and c.user.login.lower() != bot_login.lower()
        and not is_assistant_comment(c.body)
    ]
    return issue.model_copy(update={"comments": people[-DISCUSSION_COMMENTS:]})
