"""The context of one issue at its moment, built in one place: the candidates, the releases and
similar discussions of the moment, and the likely files (with the checkout's code index)."""

from __future__ import annotations

from urllib.parse import quote

from issue_assistant.config.sections import Config
from issue_assistant.context import SHOWN_MAX, Context
from issue_assistant.decision import FileLink, SeeAlso
from issue_assistant.index.candidates import similar_candidates
from issue_assistant.index.discussions import answering
from issue_assistant.likely.rank import calibration_for, likely_files
from issue_assistant.moment import Moment
from issue_assistant.tracker.models import Issue


def build_context(moment: Moment, issue: Issue, config: Config) -> Context:
    """The context of `issue` at `moment` (its time: the moment's, else the issue's creation):
    what `[context]` and `[code]` ask for, from what the moment knows."""
    as_of = moment.when(issue)
    ctx = Context(
        issue=issue,
        moment=moment,
        labels=moment.labels,
        project=config.project.description,
        as_of=as_of,
        settings=config.context,
        releases=moment.releases,
    )
    limit = max(config.duplicates.candidates, config.similar.neighbors)
    ctx.candidates = similar_candidates(moment.index, issue, as_of, limit)
    if moment.discussions is not None:
        ctx.discussions = moment.search_discussions(issue.text, ctx.settings.discussions, issue)
        hits = moment.search_discussions(issue.text, 10, issue)
        ctx.see_also = answering(hits, ctx.settings.see_also_threshold)[:2]
    likely = config.code.likely_files
    if moment.code is not None and likely > 0:
        ctx.ranked_files = likely_files(
            moment.code,
            issue.title,
            issue.body or "",
            limit=max(likely, 10),
            project=moment.repository.rpartition("/")[2],
            history=moment.fixes,
            before=as_of,
            number=issue.number,
            calibration=calibration_for(config),
        )
        ctx.likely_files = ctx.ranked_files[:likely]
        show_above = config.code.min_precision
        ctx.shown_files = [
            f
            for f in ctx.likely_files[:SHOWN_MAX]
            if f.confidence is not None and f.confidence >= show_above
        ]
    return ctx


def plan_notes(context: Context) -> dict:
    """The comment's "see also" discussions and likely files, as `Plan` fields."""
    sha = context.code.sha if context.code is not None else None
    files = []
    for f in context.shown_files:
        url = f.url(context.repository, sha)
        files.append(
            FileLink(
                path=f.path,
                line=f.line,
                url=quote(url, safe=":/#") if url else None,
                reason=f.reason,
                why=list(f.why),
                confidence=f.confidence,
                standing=f.standing,
            )
        )
    see = [
        SeeAlso(number=h.number, title=h.discussion.title, similarity=round(h.similarity, 3))
        for h in context.see_also
    ]
    return {"likely_files": files, "see_also": see}
