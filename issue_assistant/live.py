"""`analyze` on a live GitHub issue: skip checks, one comment posted or edited (the index brought
up to date first, by `sync`).

The comment waits for a maintainer (see `approve`); here nothing but the comment and the pending
label is ever written, and only in `live` writes mode.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from issue_assistant.approve.assistant_comment import Found, find_assistant_comment
from issue_assistant.comment import Plan, SetAside, render_comment
from issue_assistant.config.labels import LabelsConfig
from issue_assistant.config.sections import Config
from issue_assistant.config.weak_spots import warn_absent_labels
from issue_assistant.decision import as_json
from issue_assistant.engines import Engine
from issue_assistant.errors import GitHubError, IssueGone, no_such_issue
from issue_assistant.labelnames import find_label, has_label, key
from issue_assistant.learn.learned import Beside
from issue_assistant.moment import Moment, open_moment
from issue_assistant.named import confirm_named
from issue_assistant.pipeline import Analysis, analyze, engines_for
from issue_assistant.preset import nothing_to_propose, opened_with
from issue_assistant.settings import current
from issue_assistant.sync import CachedReads, index_progress, refresh_index
from issue_assistant.tracker.base import WritableTracker
from issue_assistant.tracker.models import Comment, Issue
from issue_assistant.votes import VoteRule
from issue_assistant.writes import Mode, Writer

if TYPE_CHECKING:
    from issue_assistant.tracker.github_tracker import GitHubTracker

log = logging.getLogger(__name__)


@dataclass
class LiveResult:
    """What one live `analyze` did (or would do, in dry-run)."""

    repository: str
    number: int
    writes: Mode
    skipped: str | None = None
    action: str = "none"
    comment: str = ""
    comment_url: str | None = None
    plan: Plan | None = None
    analysis: Analysis | None = None
    done: list[str] = field(default_factory=list)

    @property
    def error(self) -> str | None:
        """The engine's failure when the fallback engine answered instead."""
        return self.analysis.error if self.analysis else None

    @property
    def decision(self) -> dict[str, Any] | None:
        return as_json(self.analysis.decision) if self.analysis else None

    @property
    def decision_json(self) -> str:
        return json.dumps(self.decision, indent=2, sort_keys=True)


def connect(
    full_name: str,
    token: str | None = None,
    *,
    base_url: str | None = None,
    bot_login: str = "github-actions[bot]",
    writes: str = "off",
) -> GitHubTracker:
    """The GitHub tracker for `full_name` (token from the argument, GITHUB_TOKEN or GH_TOKEN;
    the API at GITHUB_API_URL, as set on GitHub Enterprise runners); `writes` is the run's
    writes mode, so that an error says whether anything was written."""
    from issue_assistant.tracker.github_tracker import GitHubTracker

    settings = current()
    token = token or settings.require_token()
    base_url = base_url or settings.api_url
    tracker = GitHubTracker(full_name, token, base_url, bot_login=bot_login)
    tracker.live_writes = writes == "live"
    return tracker


def writing(tracker: WritableTracker, writes: str) -> None:
    """Tell a tracker given from outside (the Action's, a test's) the writes mode."""
    tracker.live_writes = writes == "live"


def skip_reason(issue: Issue, config: Config) -> str | None:
    """Why the assistant leaves this issue alone, or None."""
    if issue.is_pull_request:
        return "a pull request"
    if issue.user.is_bot:
        return f"opened by a bot ({issue.user.login})"
    if has_label(issue.labels, config.approval.opt_out_label):
        return f"has the opt-out label {config.approval.opt_out_label!r}"
    return None


def _opened_with(
    tracker: WritableTracker, issue: Issue, labels: LabelsConfig, given: list[str] | None
) -> set[str] | None:
    """The labels the issue was opened with (its template's): `given` (an `opened` event's
    payload holds them), else from its timeline when it has labels of labels.toml (one
    request); None when not needed or not readable (then their origin is unknown)."""
    if given is not None:
        return set(given)
    if issue.events is not None or not labels.known(issue.labels):
        return None
    try:
        timeline = tracker.history(issue.number)
        return opened_with(issue, timeline[0]) if timeline is not None else None
    except GitHubError as exc:
        log.warning(
            "#%d: timeline unknown (%s); where its labels came from is not told", issue.number, exc
        )
        return None


def has_votes(
    tracker: WritableTracker, found: Found, comments: list, config: Config, now: datetime
) -> bool:
    """Whether a vote that counts for `apply` (the one rule, `votes.VoteRule`) is there."""
    approval = config.approval
    rule = VoteRule(tracker.permission, approval.roles, approval.bot_login)
    reactions = tracker.comment_reactions(found.comment.id) if found.comment.id is not None else []
    return rule.first_vote(found.comment, reactions, comments, now) is not None


def _same_proposal(old: Plan, new: Plan, pending: str) -> bool:
    """Whether a re-run proposes what the comment already shows (its time, the assistant's
    own pending label and what it says about votes aside)."""

    def shown(plan: Plan) -> dict[str, Any]:
        data = plan.model_dump(exclude={"created_at", "set_aside", "not_counted"})
        data["labels_before"] = [n for n in plan.labels_before if key(n) != key(pending)]
        return data

    return shown(old) == shown(new)


def _changed_since(
    tracker: WritableTracker, found: Found, config: Config, now: datetime
) -> str | None:
    """Why the comment must not be edited now (decided or voted on meanwhile), or None."""
    comments = tracker.list_comments(found.plan.issue)
    bot, repo = config.approval.bot_login, tracker.repository.full_name
    current = find_assistant_comment(comments, bot, repo, found.plan.issue)
    if current is None or current.comment.id != found.comment.id:
        return "the assistant's comment changed during the analysis"
    if current.plan.status != "pending":
        return f"the assistant's comment is already {current.plan.status}"
    if has_votes(tracker, current, comments, config, now):
        return "a maintainer voted during the analysis; left for apply"
    return None


def _own_plans(comments: list, config: Config, full_name: str, number: int) -> list:
    """The bot's comments carrying a plan for this issue, oldest first."""
    bot = config.approval.bot_login
    own = [c for c in comments if find_assistant_comment([c], bot, full_name, number)]
    return sorted(own, key=lambda c: (c.created_at, c.id or 0))


def _claim_by_posting(
    tracker: WritableTracker, writer: Writer, posted: Comment | None, config: Config, number: int
) -> str | None:
    """Two runs on one issue at once both see "no comment yet" and both post: each looks again
    after posting, and the oldest comment is the claim. A run whose comment is not the oldest
    deletes its own and stops (before the pending label), so one comment and one label remain.
    Returns why this run stops, or None when it holds the issue."""
    own_id = posted.id if posted is not None else None
    if own_id is None:
        return None
    plans = _own_plans(tracker.list_comments(number), config, tracker.repository.full_name, number)
    if not plans or plans[0].id == own_id:
        return None
    writer.delete_comment(own_id, "the assistant's comment (another run posted first)")
    return f"another run posted the assistant's comment first ({plans[0].url or plans[0].id})"


def _votes_after_edit(
    tracker: WritableTracker,
    found: Found,
    result: LiveResult,
    config: Config,
    now: datetime,
    writer: Writer,
) -> None:
    """Votes read again after the edit: one that came in while the comment was being edited
    counts for neither text (`votes.counts_for`), so the comment asks for it again (once)."""
    approval = config.approval
    rule = VoteRule(tracker.permission, approval.roles, approval.bot_login)
    before = found.comment
    for attempt in range(2):
        comments = tracker.list_comments(found.plan.issue)
        after = next((c for c in comments if c.id == before.id), None)
        if after is None or after.id is None:
            return
        reactions = tracker.comment_reactions(after.id)
        aside = rule.set_aside(before, after, reactions, comments, now)
        if not aside:
            return
        names = ", ".join(f"{v.via} by {v.actor}" for v in aside)
        if attempt or result.plan is None:
            log.warning("set aside (given while the comment was edited): %s", names)
            return
        log.warning("set aside (given while the comment was edited): %s; asking again", names)
        shown = [SetAside(actor=v.actor, via=v.via) for v in aside][:10]
        result.plan = result.plan.model_copy(update={"set_aside": shown})
        fallback = result.analysis.decision.fallback_from if result.analysis else None
        result.comment = render_comment(result.plan, fallback_from=fallback)
        writer.edit_comment(after.id, result.comment, "the assistant's comment (vote again)")
        before = after


def analyze_live(
    full_name: str,
    number: int,
    *,
    labels: LabelsConfig,
    config: Config,
    engine_name: str | None,
    writes: str,
    tracker: WritableTracker | None = None,
    now: datetime | None = None,
    opened_labels: list[str] | None = None,
    moment: Moment | None = None,
    skip: Callable[[Issue, list[Comment]], str | None] | None = None,
    evidence: Callable[[Issue, list[Comment]], Issue] | None = None,
    engines: tuple[Engine, Engine | None] | None = None,
    cache_dir: str | Path | None = None,
) -> LiveResult:
    """Analyze issue `number` now and post (or edit) the assistant's one comment.

    `tracker`: the tracker on GitHub (else one connected here), when no `moment` is given.
    `opened_labels`: the labels it was opened with, when known (the `opened` event's payload):
    then its timeline is not read to tell a template's labels from later ones.

    For runs over many issues (`backlog`): `moment`, the repository now with the tracker on
    GitHub (`Moment.live`), built once for the run (its index refreshed this run; otherwise it
    is built here, after the skip checks); `skip`, more reasons to leave the issue alone, on its
    fresh record and comments; `evidence`, the issue as the engine reads it (with its discussion
    so far); `engines`, the engine and fallback to use (made once per run; a duplicate group's
    proposal is one). The posting path is the same. The index is kept under `cache_dir`
    (`--cache-dir`), else where `Settings.cache_root` says."""
    mode: Mode = writes  # type: ignore[assignment]
    if moment is not None:
        tracker = moment.on_github()
    tracker = tracker or connect(full_name, bot_login=config.approval.bot_login, writes=mode)
    writing(tracker, mode)
    now = now or datetime.now(UTC)
    result = LiveResult(full_name, number, mode)
    # The looks before an analysis read the tracker before any moment exists: an issue skipped
    # costs no sync of the index.
    try:
        issue = tracker.get_issue(number)
    except KeyError:
        _ = tracker.repository  # a repository that is not there says so itself
        if moment is not None:
            moment.index.remove([number])  # deleted or transferred: the index forgets it
        raise IssueGone(no_such_issue(full_name, number)) from None
    reason = skip_reason(issue, config)
    bot = config.approval.bot_login
    found: Found | None = None
    comments: list[Comment] = []
    if reason is None:
        comments = tracker.list_comments(number)
        reason = skip(issue, comments) if skip is not None else None
    if reason is None:
        found = find_assistant_comment(comments, bot, full_name, number)
        if found and found.plan.status != "pending":
            reason = f"the assistant's comment is already {found.plan.status}"
        elif found and has_votes(tracker, found, comments, config, now):
            reason = "the assistant's comment already has votes; left for apply"
    if reason:
        log.info("%s#%d: skipped: %s", full_name, number, reason)
        result.skipped = reason
        return result

    if moment is None:
        flag = str(cache_dir) if cache_dir is not None else None
        cache = str(current().cache_root(config.index.cache_dir, flag))
        index = refresh_index(tracker, cache, now, config.index.vectors)
        moment = open_moment(tracker, index, labels, config, Beside(), as_of=now, live=tracker)
        warn_absent_labels(labels, tracker.repository)  # read with the index: no request more
    if evidence is not None:
        issue = evidence(issue, comments)
    pair = engines or engines_for(config, labels, engine_name)
    opened = _opened_with(moment.on_github(), issue, labels, opened_labels)
    _propose(moment, issue, found, result, config, pair, opened, now)
    return result


def _propose(
    moment: Moment,
    issue: Issue,
    found: Found | None,
    result: LiveResult,
    config: Config,
    engines: tuple[Engine, Engine | None],
    opened: set[str] | None,
    now: datetime,
) -> None:
    """The analysis of `issue` on `moment` and the comment posted or edited (into `result`):
    what it reads and writes on GitHub is the moment's (`Moment.live`)."""
    live, mode, index = moment.on_github(), result.writes, moment.index
    full_name, number = result.repository, result.number
    engine, fallback = engines
    view = CachedReads(live, index)
    view._issues[number] = issue
    analysis = analyze(
        moment.at(view, now),
        issue,
        config=config,
        engine=engine,
        fallback=fallback,
        opened_with=opened,
    )
    if analysis.error:
        log.warning("engine failed (%s); the fallback answered", analysis.error)
    plan = analysis.plan
    progress = index_progress(index, number)
    if progress is not None:
        plan = analysis.plan = plan.model_copy(update={"index_progress": progress})
        analysis.comment = render_comment(plan, fallback_from=analysis.decision.fallback_from)
    confirmed = confirm_named(live, plan)  # the tracker, not the index, is the truth now
    if confirmed is not plan:
        plan = analysis.plan = confirmed
        analysis.comment = render_comment(plan, fallback_from=analysis.decision.fallback_from)
    result.analysis, result.plan, result.comment = analysis, plan, analysis.comment
    if found is None and plan.is_empty:
        # Nothing the issue lacks: no comment at all (the summary and the log say why).
        result.skipped = nothing_to_propose(plan, plan.preset)
        log.info("%s#%d: no comment: %s", full_name, number, result.skipped)
        return
    writer = Writer(live, mode)
    if found is not None:
        # Looked at again right before the edit: a maintainer may have voted while the engine
        # ran, and that vote was for the text they saw, not for this one.
        if reason := _changed_since(live, found, config, now):
            log.info("%s#%d: not edited: %s", full_name, number, reason)
            result.skipped = reason
            return
        result.action = "edited" if mode == "live" else "would edit"
        result.comment_url = found.comment.url
        if _same_proposal(found.plan, plan, config.approval.pending_label):
            result.action = "unchanged"
        elif found.comment.body != result.comment:
            assert found.comment.id is not None
            writer.edit_comment(found.comment.id, result.comment, "the assistant's comment")
            if mode == "live":
                _votes_after_edit(live, found, result, config, now, writer)
    else:
        result.action = "posted" if mode == "live" else "would post"
        posted = writer.create_comment(number, result.comment, "the assistant's comment")
        result.comment_url = posted.url if posted is not None else None
        # posted is None unless live: then there is nothing to look at again
        reason = _claim_by_posting(live, writer, posted, config, number)
        if reason:
            log.info("%s#%d: %s", full_name, number, reason)
            result.skipped, result.action, result.done = reason, "none", writer.done
            return
    pending = config.approval.pending_label
    there = find_label(issue.labels, pending)
    if not plan.is_empty and there is None:
        writer.add_labels(number, [pending])
    elif plan.is_empty and there is not None:
        writer.remove_label(number, there)
    result.done = writer.done
    if mode == "off":
        log.info("writes are off: nothing written")
