"""The approval sweep: every issue waiting for approval (or those named), the vote looked for,
and the plan applied or dismissed, each write looked at first."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from issue_assistant.approve.answered import still_missing
from issue_assistant.approve.assistant_comment import Found, find_assistant_comment
from issue_assistant.approve.claims import Claims
from issue_assistant.approve.uncounted import say_uncounted
from issue_assistant.comment import (
    CHANGES_MAX,
    GITHUB_LIMIT,
    HISTORY_MAX,
    Outcome,
    Plan,
    render_comment,
)
from issue_assistant.config.labels import GROUPS, Group, LabelsConfig
from issue_assistant.config.sections import Config
from issue_assistant.decision import filter_labels
from issue_assistant.errors import (
    AssistantError,
    EngineError,
    GitHubError,
    UserError,
    no_such_issue,
)
from issue_assistant.labelnames import find_label, has_label, key, keys, missing
from issue_assistant.render import render
from issue_assistant.tracker.base import WritableTracker
from issue_assistant.tracker.models import Comment, Issue
from issue_assistant.votes import Vote, VoteRule
from issue_assistant.writes import Mode, Writer

log = logging.getLogger(__name__)


def revalidate(plan: Plan, labels: LabelsConfig) -> tuple[dict[Group, list[str]], list[str]]:
    """The plan's labels by group that the current labels.toml still allows; and those dropped."""
    proposed = {
        "type": [plan.type] if plan.type else [],
        "area": list(plan.areas),
        "topic": list(plan.topics),
        "priority": [plan.priority] if plan.priority else [],
    }
    return filter_labels(proposed, labels)  # type: ignore[return-value]


def _code(names: Iterable[str]) -> str:
    return ", ".join(f"`{n}`" for n in names)


@dataclass
class ApplyResult:
    """What `apply` did for one issue."""

    number: int
    # "proposed": a follow-up edited the comment into a new proposal (`followup`)
    status: Literal["approved", "dismissed", "waiting", "skipped", "failed", "proposed"]
    reason: str = ""
    actor: str | None = None
    changes: list[str] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    comment_url: str | None = None
    #: on approval, the labels added (or that a live run would add) and the duplicate marked
    labels: list[str] = field(default_factory=list)
    duplicate: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "issue": self.number,
            "status": self.status,
            "reason": self.reason,
            "actor": self.actor,
            "changes": self.changes,
            "writes": self.writes,
            "comment_url": self.comment_url,
            "labels": self.labels,
            "duplicate": self.duplicate,
        }


class Approver:
    """One `apply` run over a repository (roles are looked up once per login per run).

    It takes the tracker on GitHub, not a moment: it acts on votes on the assistant's comments,
    analyzes no issue and reads no index (see `moment`)."""

    def __init__(
        self,
        tracker: WritableTracker,
        labels: LabelsConfig,
        config: Config,
        *,
        writes: Mode = "dry-run",
        now: datetime | None = None,
    ) -> None:
        self.tracker = tracker
        self.labels = labels
        self.config = config
        self.writes = writes
        self.now = now or datetime.now(UTC)
        self.bot = config.approval.bot_login
        self.pending = config.approval.pending_label
        self.rule = VoteRule(tracker.permission, config.approval.roles, self.bot)
        self._writers: list[Writer] = []  # the current issue's, for what was written
        self.claims = Claims(tracker, writes, self.now)

    def _writer(self) -> Writer:
        writer = Writer(self.tracker, self.writes)
        self._writers.append(writer)
        return writer

    @property
    def _written(self) -> list[str]:
        return [w for writer in self._writers for w in writer.done]

    def run(self, numbers: Iterable[int] | None = None) -> list[ApplyResult]:
        """Every issue with the pending label, or just `numbers`.

        Closed ones are listed too: an approval that closed an issue as a duplicate and then
        failed before editing its comment (or removing the label) is finished by the next sweep
        (others are skipped without a request).
        """
        if numbers is None:
            issues = self.tracker.issues_with_label(self.pending, state="all")
        else:
            issues = []
            for n in numbers:
                try:
                    issues.append(self.tracker.get_issue(n))
                except KeyError:
                    # As analyze: the wrong number is the user's mistake (exit 2), not "nothing
                    # waits for approval".
                    repo = self.tracker.repository.full_name
                    raise UserError(no_such_issue(repo, n)) from None
        results: list[ApplyResult] = []
        for issue in issues:
            # Whatever fails on one issue is reported for that issue, with exactly what was
            # written before it failed, and the sweep goes on to the next.
            self._writers = []
            try:
                results.append(self.process(issue))
            except Exception as exc:  # noqa: BLE001 - one issue never stops the sweep
                written = self._written
                what = str(exc) if isinstance(exc, AssistantError) else repr(exc)
                done = f"; written before it: {'; '.join(written)}" if written else ""
                reason = f"{what}{done or '; nothing was written'}"
                log.error("#%d: %s; the plan stays pending", issue.number, " ".join(reason.split()))
                results.append(ApplyResult(issue.number, "failed", reason, writes=written))
        if not results:
            log.info("no issue waits for approval")
        return results

    def _skip(self, issue: Issue, reason: str, level: int = logging.INFO) -> ApplyResult:
        log.log(level, "#%d: skipped: %s", issue.number, reason)
        return ApplyResult(issue.number, "skipped", reason)

    def process(self, issue: Issue) -> ApplyResult:
        """Look for a vote on one issue and act on it, holding the issue's claim while writing."""
        looked = self._look(issue)
        if isinstance(looked, ApplyResult):
            return looked
        found = looked[0]
        if self.writes != "live" or found.comment.id is None:
            return self._decide(issue, *looked)
        claim = self.claims.take(found.comment.id)
        if claim is None:
            return self._skip(issue, "another apply run is at work on it")
        self.claims.held = (found.comment.id, claim)
        try:
            # Looked at again under the claim: another run may have finished in the meantime.
            fresh = self.tracker.get_issue(issue.number)
            looked = self._look(fresh)
            if isinstance(looked, ApplyResult):
                return looked
            return self._decide(fresh, *looked)
        finally:
            if self.claims.held is not None:
                try:
                    self.claims.withdraw()
                except GitHubError as exc:
                    log.warning("#%d: could not withdraw the claim (%s)", issue.number, exc)
                self.claims.held = None

    def _leftover_claims(self, comment_id: int, writer: Writer) -> None:
        """Withdraw claims a failed run left on a decided comment (not this run's own)."""
        own = self.claims.held[1] if self.claims.held else None
        for r in self.tracker.comment_reactions(comment_id):
            mine = r.user.login.lower() == self.bot.lower()
            if mine and r.content == "eyes" and r.id is not None and r.id != own:
                writer.withdraw_left_claim(comment_id, r.id)

    def _look(self, issue: Issue) -> ApplyResult | tuple[Found, Vote, list[Comment]]:
        """The skip, cleanup or wait for one issue; else its comment, the vote and the comments."""
        n = issue.number
        if issue.is_pull_request:
            return self._skip(issue, "a pull request")
        # A closed issue is looked at only to finish an approval that closed it as a duplicate.
        if issue.state != "open" and issue.state_reason != "duplicate":
            return self._skip(issue, "the issue is closed")
        comments = self.tracker.list_comments(n)
        found = find_assistant_comment(comments, self.bot, self.tracker.repository.full_name, n)
        if found is None:
            return self._skip(issue, f"no comment with a plan by {self.bot}")
        pending = find_label(issue.labels, self.pending)
        if found.plan.status != "pending":
            # Also on a closed issue: an approval that closed it may have failed just before this.
            result = self._skip(issue, f"already {found.plan.status}")
            if pending is not None:
                writer = self._writer()
                if found.comment.id is not None:
                    self._leftover_claims(found.comment.id, writer)
                writer.remove_label(n, pending)
                result.writes = writer.done
            return result
        if issue.state != "open" and not found.plan.duplicate:
            return self._skip(issue, "the issue is closed")
        if pending is None:
            return self._skip(issue, f"no {self.pending!r} label")
        reactions = self.tracker.comment_reactions(found.comment.id) if found.comment.id else []
        vote = self.rule.first_vote(found.comment, reactions, comments, self.now)
        if vote is None:
            log.info("#%d: waiting for a maintainer", n)
            ignored = self.rule.not_counted(found.comment, reactions, comments, self.now)
            result = ApplyResult(n, "waiting", "; ".join(ignored) or "no maintainer has voted yet")
            result.writes = say_uncounted(
                self.tracker, self.rule, self.claims, self._writer, found, reactions, comments
            )
            return result
        return found, vote, comments

    def _decide(
        self, issue: Issue, found: Found, vote: Vote, comments: list[Comment]
    ) -> ApplyResult:
        if (reason := self._cannot_record(found, vote)) is not None:
            return self._skip(issue, reason, logging.WARNING)
        if vote.action == "dismiss":
            return self.dismiss(issue, found, vote)
        return self.approve(issue, found, vote, comments)

    def _outcome(self, found: Found, vote: Vote, changes: list[str], asked: bool = False) -> Plan:
        """The plan as the comment records it once decided (`asked`: its questions to the
        reporter were approved, and the comment shows them in view)."""
        action = "approved" if vote.action == "approve" else "dismissed"
        outcome = Outcome(action=action, actor=vote.actor, at=vote.at, changes=changes, asked=asked)
        return found.plan.model_copy(
            update={
                "status": action,
                "history": [*found.plan.history, outcome][-HISTORY_MAX:],
                "set_aside": [],  # decided: no vote is asked for any more
                "not_counted": [],
            }
        )

    def _cannot_record(self, found: Found, vote: Vote) -> str | None:
        """Why the outcome could not be written into the comment (checked before any write,
        with the longest list of changes a run can make), or None."""
        longest = ["x" * 300] * CHANGES_MAX
        try:
            render_comment(self._outcome(found, vote, longest, bool(found.plan.questions)))
        except EngineError:
            return (
                f"the plan in the comment is too long to record the outcome under GitHub's "
                f"{GITHUB_LIMIT} characters (edited by hand?); nothing was written"
            )
        return None

    def _finish(
        self,
        issue: Issue,
        found: Found,
        vote: Vote,
        changes: list[str],
        writer: Writer,
        asked: bool = False,
    ) -> ApplyResult:
        """Edit the comment to record the outcome, then remove the pending label."""
        action = "approved" if vote.action == "approve" else "dismissed"
        plan = self._outcome(found, vote, changes, asked)
        assert found.comment.id is not None
        writer.edit_comment(found.comment.id, render_comment(plan), f"the comment ({action})")
        result = ApplyResult(
            issue.number,
            action,
            f"{action} by {vote.actor}",
            vote.actor,
            changes,
            writer.done,
            found.comment.url,
        )
        log.info("#%d: %s by %s via %s", issue.number, action, vote.actor, vote.via)
        pending = find_label(issue.labels, self.pending)
        try:
            if self.writes == "live":
                self.claims.withdraw()  # before the label: a sweep then still finds what is left
            if pending is not None:
                writer.remove_label(issue.number, pending)
        except GitHubError as exc:
            # The comment already says so: the plan is decided, only the cleanup is left over.
            result.status = "failed"
            result.reason = (
                f"{action} by {vote.actor}, but the cleanup failed ({exc}); "
                "the next run removes the pending label"
            )
            log.error("#%d: %s", issue.number, result.reason)
        return result

    def dismiss(self, issue: Issue, found: Found, vote: Vote) -> ApplyResult:
        return self._finish(issue, found, vote, [], self._writer())

    def approve(
        self, issue: Issue, found: Found, vote: Vote, comments: list[Comment]
    ) -> ApplyResult:
        """Labels, duplicate, close, then the comment (which shows the approved questions);
        each write looked at first."""
        plan, n = found.plan, issue.number
        writer = self._writer()
        changes: list[str] = []
        groups, dropped = revalidate(plan, self.labels)
        if dropped:
            changes.append(f"dropped {_code(dropped)} (not allowed by labels.toml now)")
        own = [c for c in comments if c.user.login.lower() == self.bot.lower()]
        duplicate = self._duplicate(issue, plan, changes)
        closing = duplicate is not None and self.config.duplicates.close
        asking = bool(plan.questions) and not closing
        if asking and not still_missing(issue, found, comments, self.labels):
            asking = False  # answered while the proposal waited: neither label nor questions
            changes.append("asked nothing: the reporter had already answered the questions")
        # The labels as they are right before the write: a person may have changed them since
        # this run read the issue (their change wins, `_labels`).
        issue = self._fresh(issue)
        to_add, labeled = self._labels(issue, plan, groups, changes)
        # the repository's labels (read with the issue's comment already; unknown: none absent)
        absent = missing(to_add, (lab.name for lab in self.tracker.repository.labels))
        if absent:  # GitHub would create it: a write nobody approved
            to_add = [n for n in to_add if n not in absent]
            labeled = [n for n in labeled if n not in absent]
            changes.append(f"left out {_code(absent)}: not a label of this repository")
        needs_info = self.labels.needs_info
        if asking and needs_info and not has_label(issue.labels, needs_info):
            to_add.append(needs_info)
        taken: set[str] = set()  # ours, taken back where a person set the group meanwhile
        if to_add:
            writer.add_labels(n, to_add)
            if self.writes == "live":
                taken = self._after_labels(issue, to_add, changes, writer)
                labeled = [name for name in labeled if key(name) not in taken]
        if labeled:
            changes.append(f"labeled {_code(labeled)}")
        # Only the needs-info label may be taken off (the reporter answered: `followup`).
        for name in plan.remove:
            there = find_label(issue.labels, name)
            if there is not None and key(there) == key(needs_info or ""):
                writer.remove_label(n, there)
                changes.append(f"removed {_code([there])}")
        if asking:  # the approved comment shows them to the reporter (`_finish`)
            changes.append(f"asked the reporter {len(plan.questions)} question(s)")
        if duplicate is not None:
            text = render("duplicate.md.j2", number=duplicate).strip()
            posted = re.compile(rf"^\s*Duplicate of #{duplicate}\b", re.IGNORECASE)
            if not any(posted.match(c.body) for c in own):
                writer.create_comment(n, text, f"'{text}'")
            changes.append(f"marked as a duplicate of #{duplicate}")
        if closing:
            if issue.state == "open" and (fresh := self._fresh(issue)).state != "open":
                changes.append(f"left it {fresh.state} (changed by hand meanwhile)")
            else:
                if issue.state == "open":
                    writer.close(n, "duplicate")
                changes.append("closed as a duplicate")
        result = self._finish(issue, found, vote, changes, writer, asked=asking)
        result.labels = [name for name in to_add if key(name) not in taken]
        result.duplicate = duplicate
        return result

    def _fresh(self, issue: Issue) -> Issue:
        """The issue read again (its labels and state as they are now)."""
        try:
            return self.tracker.get_issue(issue.number)
        except KeyError:
            return issue

    def _after_labels(
        self, before: Issue, added: list[str], changes: list[str], writer: Writer
    ) -> set[str]:
        """Look again right after the label write: in a group where a person set a label at the
        same time, ours is taken back (theirs wins). Returns the keys of those taken back."""
        after = self._fresh(before)
        had, mine = keys(before.labels), keys(added)
        shown = {key(name): name for name in after.labels}
        taken: set[str] = set()
        for group in GROUPS:
            names = keys(lab.name for lab in self.labels.group(group))  # type: ignore[arg-type]
            theirs = (keys(after.labels) & names) - had - mine
            ours = [name for name in added if key(name) in names and key(name) in shown]
            if not theirs or not ours:
                continue
            for name in ours:
                writer.remove_label(before.number, shown[key(name)])
                taken.add(key(name))
            kept = _code(sorted(shown[k] for k in theirs | (had & names)))
            changes.append(f"kept the {group} labels set by hand ({kept}) at the same time")
        return taken

    def _labels(
        self, issue: Issue, plan: Plan, groups: dict[Group, list[str]], changes: list[str]
    ) -> tuple[list[str], list[str]]:
        """Labels to add now, and the plan's labels that end up on the issue (for the record).

        A group whose labels changed since the comment was written was decided by a human and is
        left alone; a group already full (e.g. a type set by an issue template) is not overfilled.
        """
        # Compared without regard to case, as GitHub compares label names.
        current, before = keys(issue.labels), keys(plan.labels_before)
        shown = {key(n): n for n in issue.labels}
        to_add: list[str] = []
        labeled: list[str] = []
        for group in GROUPS:
            wanted = groups[group]  # type: ignore[index]
            if not wanted:
                continue
            names = keys(lab.name for lab in self.labels.group(group))  # type: ignore[arg-type]
            now, then, want = current & names, before & names, keys(wanted)
            if (now - then - want) or (then - now):
                kept = _code(sorted(shown[k] for k in now)) or "none"
                changes.append(f"kept the {group} labels set by hand ({kept})")
                continue
            others = now - want
            room = self.labels.limit(group) - len(others)  # type: ignore[arg-type]
            keep = wanted[: max(room, 0)]
            if len(keep) < len(wanted):
                there = _code(sorted(shown[k] for k in others))
                changes.append(f"kept the {group} labels already there ({there})")
            to_add += [name for name in keep if key(name) not in current]
            labeled += [name for name in keep if key(name) not in before]
        return to_add, labeled

    def _duplicate(self, issue: Issue, plan: Plan, changes: list[str]) -> int | None:
        """The plan's original if it is still an issue, else None (and say so)."""
        if plan.duplicate is None:
            return None
        number = plan.duplicate.number
        try:
            original = self.tracker.get_issue(number)
        except KeyError:
            original = None
        if original is None or original.is_pull_request or number == issue.number:
            changes.append(f"dropped the duplicate #{number} (not an issue now)")
            return None
        return number
