"""The `similar` engine: no LLM, only the repository's own past issues.

Labels come from the learned label model (`issue_assistant.learn`): per group a linear classifier
fit on the issues created before this one, proposing a label only when its calibrated probability
reaches the group's threshold for `[labels] target_precision`. A group with too little history
(or `[labels] model = "vote"`) falls back to a similarity-weighted vote of the most similar earlier
labelled issues. A duplicate is proposed when the best match's text similarity clears a calibrated
threshold. Questions come from the chosen type's `ask` list.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from issue_assistant.config import GROUPS, LabelsConfig, SimilarConfig
from issue_assistant.decision import Decision, Duplicate
from issue_assistant.engines.base import Engine, register
from issue_assistant.index import IssueIndex, duplicates
from issue_assistant.index.store import cosine
from issue_assistant.learn.calibration import proposals
from issue_assistant.tracker.models import Issue
from issue_assistant.versions import version_note

if TYPE_CHECKING:
    from issue_assistant.context import Candidate, Context
    from issue_assistant.learn.model import LabelModel

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


def boost_areas(
    votes: list[tuple[str, float]], context: Context, labels: LabelsConfig, weight: float
) -> list[tuple[str, float]]:
    """Area votes plus `weight` times the rank-weighted share of the likely files whose path an
    area's `paths` match (the first file counts most), best first, within the group's limit."""
    files = context.likely_files
    ranks = [1 / (i + 1) for i in range(len(files))]
    total = sum(ranks) or 1.0
    scores = dict(votes)
    allowed = set(labels.proposable("area"))
    for area in labels.area:
        if not area.paths or area.name not in allowed:
            continue
        share = sum(r for f, r in zip(files, ranks, strict=True) if area.owns(f.path)) / total
        if share:
            scores[area.name] = min(1.0, scores.get(area.name, 0.0) + weight * share)
    ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
    return ranked[: labels.limit("area")]


@dataclass(frozen=True)
class DuplicateSettings:
    """The duplicate score's weights (None: the hand weights), its threshold, and their source."""

    weights: dict[str, float] | None
    threshold: float
    where: str

    def describe(self) -> str:
        """Which duplicate weights and threshold answered (the report names them)."""
        fitted = "weights fit on this repository's known duplicates"
        score = fitted if self.weights else "hand weights"
        return f"duplicates: {score}, threshold {self.threshold:.2f} ({self.where})"


@register
class SimilarEngine(Engine):
    """Retrieval over the repository's past issues; free, offline, and the fallback."""

    name = "similar"
    Options = SimilarConfig

    # Where label models come from: the artifact beside the index (analyze, the Action; None:
    # the shared store, made on first use, so loading the engine opens no model),
    # or evaluate's time buckets (set by the evaluator).
    label_source: object | None = None
    # evaluate turns this off: calibration.json was fit on the whole history, later issues too.
    use_calibration_file: bool = True
    # evaluate's duplicate weights and threshold per time bucket (`BucketDuplicates`), or None.
    duplicate_source: object | None = None

    def label_model(self, context: Context) -> LabelModel | None:
        if self.config.labels.model == "vote":
            return None
        source = self.label_source or _store_source()
        return source.model_for(  # type: ignore[attr-defined]
            context.tracker, context.index, self.labels, context.issue.created_at
        )

    def warm(self, context: Context) -> None:
        """Load the label model, or fit it when there is none yet (15-50 s on a large history),
        before the engine is timed, and before a primary engine can fail over to this one."""
        self.label_model(context)

    def decide(self, context: Context) -> Decision:
        from issue_assistant.learn.model import SINGLE

        cfg: SimilarConfig = self.options  # type: ignore[assignment]
        neighbors = context.search_like(limit=max(cfg.neighbors * 3, 30))
        decision: dict = {"areas": [], "topics": []}
        confidence: dict[str, float] = {}
        model = self.label_model(context)
        probs = (
            model.probabilities(context.issue, _issue_vector(context, model))
            if model is not None
            else {}
        )
        modes: dict[str, str] = {}
        target = self.config.labels.target_precision
        for group in GROUPS:
            gm = model.groups.get(group) if model is not None else None
            if gm is not None and gm.mode == "learned":
                modes[group] = "learned"
                threshold = gm.table.choose(target) if gm.table is not None else None
                names = (
                    proposals(
                        probs.get(group, {}),
                        threshold,
                        single=group in SINGLE,
                        limit=self.labels.limit(group),  # type: ignore[arg-type]
                    )
                    if threshold is not None
                    else []
                )
                chosen = [(n, probs[group][n]) for n in names]
            else:
                modes[group] = "vote"
                chosen = self._vote(group, neighbors, cfg.neighbors, cfg.min_confidence)
            if (
                modes[group] == "vote"
                and group == "area"
                and context.likely_files
                and self.config.code.area_boost > 0
            ):
                votes = self._vote(group, neighbors, cfg.neighbors, 0.0)
                chosen = boost_areas(votes, context, self.labels, self.config.code.area_boost)
                chosen = [(n, c) for n, c in chosen if c >= cfg.min_confidence]
            for name, conf in chosen:
                confidence[name] = round(conf, 3)
            names = [n for n, _ in chosen]
            if group in ("type", "priority"):
                decision[group] = names[0] if names else None
            else:
                decision[group + "s"] = names
        dup_settings = self.duplicate_settings(context)
        duplicate = self._duplicate(context, dup_settings)
        # A type the issue already carries (an issue form's, say) decides what must be asked.
        present = [
            lab
            for lab in self.labels.known(context.issue.labels)
            if self.labels.group_of(lab) == "type"
        ]
        questions = self._questions(context, present[0] if present else decision.get("type"))
        summary = self._summary(context, decision, neighbors, modes, model is not None)
        return Decision(
            **decision,
            duplicate=duplicate,
            questions=questions,
            summary=summary,
            confidence=confidence,
            engine=self.name,
            candidates=[c.issue.number for c in context.candidates],
            probabilities={g: {n: round(p, 4) for n, p in ps.items()} for g, ps in probs.items()},
            label_model=modes,
            calibration=f"{_calibration_text(model, target)}; {dup_settings.describe()}",
        )

    def _vote(
        self, group: str, neighbors: list[Candidate], k: int, threshold: float
    ) -> list[tuple[str, float]]:
        """Share of the neighbours' weight behind each label of `group`.

        For `type` only neighbours with a type label count; for the other groups every neighbour
        that was triaged at all (any label of labels.toml) counts, so silence is a vote for none.
        """
        allowed = set(self.labels.proposable(group))  # type: ignore[arg-type]
        if not allowed:
            return []
        known = self.labels.all_names()
        votes: Counter[str] = Counter()
        total = 0.0
        used = 0
        top = neighbors[0].score if neighbors else 1.0
        for cand in neighbors:
            relevant = allowed if group == "type" else known
            mine = self.labels.known(cand.issue.labels)  # as labels.toml spells them
            if not any(lab in relevant for lab in mine):
                continue
            weight = (cand.score / top) ** 2 if top > 0 else 1.0
            total += weight
            for lab in mine:
                if lab in allowed:
                    votes[lab] += weight
            used += 1
            if used >= k:
                break
        if total <= 0 or used < 2:
            return []
        ranked = [(lab, v / total) for lab, v in votes.most_common() if v / total >= threshold]
        return ranked[: self.labels.limit(group)]  # type: ignore[arg-type]

    def duplicate_candidate(self, context: Context) -> tuple[float, Candidate] | None:
        """The most likely original and its pairwise score in [0, 1] (`index.duplicates`;
        what `calibrate` thresholds)."""
        scored = duplicates.score_candidates(context, self.config.duplicates.candidates)
        return (scored[0][1], scored[0][0]) if scored else None

    def duplicate_settings(self, context: Context) -> DuplicateSettings:
        """The score's weights (None: the hand weights) and the threshold for `context`, and
        where they come from: evaluate's time bucket, `calibrate`'s file, or `[duplicates]`."""
        default = self.config.duplicates.threshold
        if self.duplicate_source is not None:
            weights, found, known = self.duplicate_source.for_moment(context.issue.created_at)  # type: ignore[attr-defined]
            where = f"fit on the {known} known duplicates closed before this bucket's cutoff"
            return DuplicateSettings(weights, found if found is not None else default, where)
        if self.use_calibration_file:
            from issue_assistant.learn.calibrate import duplicate_calibration_of

            cal = duplicate_calibration_of(context.index.path)
            if cal is not None and cal.threshold is not None:
                return DuplicateSettings(cal.weights, cal.threshold, "from calibration.json")
            if cal is not None:
                return DuplicateSettings(cal.weights, default, "[duplicates] threshold")
        return DuplicateSettings(None, default, "[duplicates] threshold")

    def duplicate_weights(self, context: Context) -> dict[str, float] | None:
        """The score's weights `calibrate` fit on this repository's known duplicates, if any."""
        return self.duplicate_settings(context).weights

    def _duplicate(self, context: Context, settings: DuplicateSettings) -> Duplicate | None:
        """The pairwise duplicate score, thresholded; no proposal when a template's many
        near-identical reports match about as well."""
        cfg = self.config.duplicates
        scored = duplicates.score_candidates(context, cfg.candidates, settings.weights)
        chosen = duplicates.choose(scored, settings.threshold, cfg.margin)
        if chosen is None:
            return None
        cand, score = chosen
        reason = duplicates.describe(cand, score)
        return Duplicate(number=cand.issue.number, reason=reason, confidence=round(score, 3))

    def _questions(self, context: Context, type_name: str | None) -> list[str]:
        spec = self.labels.type_label(type_name)
        if spec is None:
            return []
        text = context.issue.text
        questions = [ask.question for ask in spec.ask if not ask.present_in(text)]
        return questions + version_questions(context, spec.ask)

    @staticmethod
    def _summary(
        context: Context,
        decision: dict,
        neighbors: list[Candidate],
        modes: dict[str, str],
        learning: bool = False,
    ) -> str:
        nearest = ", ".join(f"#{c.issue.number}" for c in neighbors[:3])
        kind = decision.get("type")
        if modes.get("type") == "learned":
            guess = (
                f"The label model learned from this repository's issues says `{kind}`"
                if kind
                else "The label model learned from this repository's issues is not sure of a type"
            )
            return f"{guess} (similar earlier issues: {nearest})." if nearest else f"{guess}."
        if not nearest:
            return "No similar earlier issues were found, so no labels are proposed."
        guess = (
            f"Earlier issues like this one were labelled `{kind}`"
            if kind
            else ("Earlier issues like this one do not agree on a type")
        )
        why = "; too few labelled issues to learn from" if learning else ""
        return f"{guess} (the most similar: {nearest}{why})."


def _issue_vector(context: Context, model: LabelModel):  # noqa: ANN202
    """The issue's sentence embedding when the label model has embedding heads, else None."""
    if not model.uses_embeddings or context.index.vectors is None:
        return None
    from issue_assistant.index.retrieval import Retriever

    return Retriever(context.index).query_vector(context.issue)


@cache
def _store_source() -> object:
    """The label models stored beside the index, shared by every engine of the process."""
    from issue_assistant.learn.store import StoreSource

    return StoreSource()


def _calibration_text(model: LabelModel | None, target: float) -> str:
    if model is None:
        return "none: [labels] model = vote"
    return f"time-ordered cross-validation for precision {target:.2f}, {model.describe()}"
