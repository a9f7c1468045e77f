"""The `similar` engine: no LLM, only the repository's own past issues.

Labels come from the learned label model (`issue_assistant.learn`): per group a linear classifier
fit on the issues created before this one, proposing its best label(s) in a confidence tier
measured on the repository's history, unless that history says proposals at that confidence are
right less often than `[labels] min_precision` (`engines/similar_labels.py`, `learn/tiers.py`).
A group with too little history (or `[labels] model = "vote"`) falls back to a similarity-weighted
vote of the most similar earlier labelled issues. A duplicate is proposed when the best match's
text similarity clears a calibrated threshold. Questions come from the chosen type's `ask` list.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from issue_assistant import asking, formlabels, forms
from issue_assistant.config.engine_options import SimilarConfig
from issue_assistant.config.sections import LabelModelConfig
from issue_assistant.decision import REASON_MAX, Decision, Duplicate, LabelTier
from issue_assistant.engine_registry import register
from issue_assistant.engines import similar_labels
from issue_assistant.engines.base import Engine
from issue_assistant.index import IssueIndex, duplicates
from issue_assistant.index.duplicates import DuplicateSettings
from issue_assistant.index.search import cosine
from issue_assistant.tracker.models import Issue
from issue_assistant.tracker.versions import version_note

if TYPE_CHECKING:
    from issue_assistant.context import Context
    from issue_assistant.index.candidates import Candidate
    from issue_assistant.learn.model import LabelModel

_LOW = LabelTier(tier="possible")
_HEADING = re.compile(r"^\s{0,3}#{1,6} .*$", re.MULTILINE)
_FENCE = re.compile(r"```.*?```", re.DOTALL)


def prose(body: str | None) -> str:
    """The reporter's own words: template headings and code blocks removed."""
    return _HEADING.sub(" ", _FENCE.sub(" ", body or ""))


def text_similarity(index: IssueIndex, a: Issue, b: Issue) -> float:
    """Similarity in [0, 1] of two issues: TF-IDF cosine of titles and of their prose."""
    title = cosine(index.vector(a.title, "title"), index.vector(b.title, "title"))
    body = cosine(index.vector(prose(a.body)), index.vector(prose(b.body)))
    return 0.5 * title + 0.5 * body


def version_questions(context: Context, asks: list) -> list[str]:
    """ "The latest release is X" when an ask requires the version and the reporter named an
    older one (only with the release list of the moment)."""
    if not any(ask.requires == "version" and ask.present_in(context.issue.text) for ask in asks):
        return []
    project = context.repository.rpartition("/")[2]
    note = version_note(context.issue.text, project, context.releases)
    return [note] if note else []


@register
class SimilarEngine(Engine):
    """Retrieval over the repository's past issues; free, offline, and the fallback."""

    name = "similar"
    Options = SimilarConfig
    learns = True

    def label_model(self, context: Context) -> LabelModel | None:
        """The label model the moment's learned state gives for the issue (None: the vote)."""
        if self.config.labels.model == "vote":
            return None
        moment = context.moment
        return moment.learned.label_model(
            moment.tracker,
            moment.index,
            self.labels,
            context.issue.created_at,
            replay=moment.replay,
        )

    def warm(self, context: Context) -> None:
        """Load the label model, or fit it when there is none yet or it is due (minutes on a
        large history: docs/benchmarks.md, "Speed at scale"), before the engine is timed, and
        before a primary engine can fail over to this one."""
        self.label_model(context)

    def decide(self, context: Context) -> Decision:
        cfg: SimilarConfig = self.options  # type: ignore[assignment]
        neighbors = context.moment.like(context.issue, limit=max(cfg.neighbors * 3, 30))
        model = self.label_model(context)
        probs = (
            model.probabilities(context.issue, _issue_vector(context, model))
            if model is not None
            else {}
        )
        answer = similar_labels.answer(
            context, self.labels, self.config, cfg, model, probs, neighbors
        )
        decision = answer.fields()
        why = self._form_kinds(context, decision, answer.tiers)
        dup_settings = self.duplicate_settings(context)
        duplicate = self._duplicate(context, dup_settings)
        # A type the issue already carries (an issue form's, say) decides what must be asked.
        present = [
            lab
            for lab in self.labels.known(context.issue.labels)
            if self.labels.group_of(lab) == "type"
        ]
        # the groups the issue's labels already answer ("Why" says nothing of their abstention)
        filled = {self.labels.group_of(lab) for lab in self.labels.known(context.issue.labels)}
        questions = self._questions(context, present[0] if present else decision.get("type"))
        return Decision(
            **decision,
            duplicate=duplicate,
            questions=questions,
            why=[
                *why,
                *similar_labels.why_notes(
                    answer, self.labels, model.issues if model else None, filled
                ),
            ],
            confidence=answer.confidence,
            tiers=answer.tiers,
            engine=self.name,
            candidates=[c.issue.number for c in context.candidates],
            probabilities={g: {n: round(p, 4) for n, p in ps.items()} for g, ps in probs.items()},
            label_model=answer.modes,
            label_groups=answer.groups,
            calibration=(
                f"{_calibration_text(model, self.config.labels)}; {dup_settings.describe()}"
            ),
            duplicate_threshold=round(dup_settings.threshold, 3),
            duplicate_threshold_source=dup_settings.source,
        )

    def duplicate_candidate(self, context: Context) -> tuple[float, Candidate] | None:
        """The most likely original and its pairwise score in [0, 1] (`index.duplicates`;
        what `calibrate` thresholds)."""
        scored = duplicates.score_candidates(context, self.config.duplicates.candidates)
        return (scored[0][1], scored[0][0]) if scored else None

    def duplicate_settings(self, context: Context) -> DuplicateSettings:
        """The score's weights (None: the hand weights) and the threshold for `context`, and
        where they come from (`learn.learned.duplicate_settings`)."""
        from issue_assistant.learn.learned import duplicate_settings

        learned = context.moment.learned
        when = context.issue.created_at
        return duplicate_settings(self.config.duplicates, learned, context.index, when)

    def duplicate_weights(self, context: Context) -> dict[str, float] | None:
        """The score's weights `calibrate` fit on this repository's known duplicates, if any."""
        return self.duplicate_settings(context).weights

    def _duplicate(self, context: Context, settings: DuplicateSettings) -> Duplicate | None:
        """The pairwise duplicate score, thresholded, of the candidates evidence carries (never
        title words alone) that are no port or follow-up (`PairFeatures.claimable`: those are
        related, not duplicates); no proposal when a template's many near-identical reports
        match about as well."""
        cfg = self.config.duplicates
        claims = duplicates.claims(context, cfg.candidates, settings.weights)
        chosen = duplicates.choose(claims, settings.threshold, cfg.margin)
        if chosen is None:
            return None
        best = chosen[0]
        reason = duplicates.reason(best.candidate, best.features, REASON_MAX)
        return Duplicate(
            number=best.candidate.issue.number, reason=reason, confidence=round(best.claim, 3)
        )

    def _form_kinds(self, context: Context, fields: dict, tiers: dict[str, LabelTier]) -> list[str]:
        """A form's answer naming a kind (`formlabels`): the labels it names are proposed (those
        the issue has aside), and the model's type is dropped, unless highly confident, when
        the answer names another group's label and no type. Returns the sentences saying so."""
        found = formlabels.kind_labels(context.form_answers(), self.labels)
        named: dict[forms.Answer, list[str]] = {}
        for ans, name in found:
            named.setdefault(ans, []).append(name)
        why = [formlabels.because(ans, names) for ans, names in named.items()]
        have = set(context.issue.labels)
        for _, name in found:
            group = self.labels.group_of(name)
            if name in have or group is None:
                continue
            if group in ("type", "priority"):
                fields[group] = name
            elif name not in fields[group + "s"]:
                fields[group + "s"] = [name, *fields[group + "s"]]
            tiers[name] = LabelTier(tier="likely", source="form")
        guessed = fields.get("type")
        groups = {self.labels.group_of(n) for _, n in found}
        if found and "type" not in groups and guessed and tiers.get(guessed, _LOW).tier != "high":
            fields["type"] = None
            why.append(f"`{guessed}` is not proposed: the form's answer names no type.")
        return why

    def _questions(self, context: Context, type_name: str | None) -> list[str]:
        spec = self.labels.type_label(type_name)
        if spec is None:
            return []
        # What the form's fields, the title and the reporter's replies so far say counts (the
        # backlog reads an issue as of now, with its discussion); `decision.validate` then asks
        # nothing on an issue people already discuss.
        still = asking.missing(spec.ask, context.issue, context.form_answers())
        questions = [ask.question for ask in still]
        return questions + version_questions(context, spec.ask)


def _issue_vector(context: Context, model: LabelModel):  # noqa: ANN202
    """The issue's sentence embedding when the label model has embedding heads, else None."""
    if not model.uses_embeddings or context.index.sentences is None:
        return None
    from issue_assistant.index.retrieval import Retriever

    return Retriever(context.index).query_vector(context.issue)


def _calibration_text(model: LabelModel | None, cfg: LabelModelConfig) -> str:
    if model is None:
        return "none: [labels] model = vote"
    methods = sorted({g.table.method for g in model.groups.values() if g.table and g.table.method})
    how = " and ".join(methods) or "no"
    text = (
        f"tiers from {how} out-of-fold precision (floor {cfg.min_precision:.2f}, high "
        f"{cfg.target_precision:.2f}, proposing {cfg.propose} and above), {model.describe()}"
    )
    return f"{text}; {model.origin}" if model.origin else text
