"""The `similar` engine's labels: per configured group, the learned model's tiers or the vote.

A learned group proposes what `learn/tiers.py` chooses; a group with too little history to learn
(or `[labels] model = "vote"`) proposes the similarity-weighted vote of the most similar earlier
labelled issues, as "possible" (not measured). Every configured group that proposes nothing gets
a reason, which the decision records (`GroupOutcome`), and a plain note for the comment's "Why"
(`why_notes`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from issue_assistant.config.engine_options import SimilarConfig
from issue_assistant.config.labels import GROUPS, LabelsConfig
from issue_assistant.config.sections import Config
from issue_assistant.decision import TIER_WORDS, GroupOutcome, LabelTier
from issue_assistant.learn import tiers

if TYPE_CHECKING:
    from issue_assistant.context import Context
    from issue_assistant.index.candidates import Candidate
    from issue_assistant.learn.model import LabelModel

SINGLE = ("type", "priority")
UNMEASURED_NEIGHBOURS = (
    "only a guess from similar earlier issues, and only measured labels are proposed"
)


def boost_areas(
    shares: list[tuple[str, float]], context: Context, labels: LabelsConfig, weight: float
) -> list[tuple[str, float]]:
    """Area shares plus `weight` times the rank-weighted share of the likely files whose path an
    area's `paths` match (the first file counts most), best first, within the group's limit."""
    files = context.likely_files
    ranks = [1 / (i + 1) for i in range(len(files))]
    total = sum(ranks) or 1.0
    scores = dict(shares)
    allowed = set(labels.proposable("area"))
    for area in labels.area:
        if not area.paths or area.name not in allowed:
            continue
        share = sum(r for f, r in zip(files, ranks, strict=True) if area.owns(f.path)) / total
        if share:
            scores[area.name] = min(1.0, scores.get(area.name, 0.0) + weight * share)
    ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
    return ranked[: labels.limit("area")]


def neighbour_labels(
    labels: LabelsConfig, group: str, neighbors: list[Candidate], k: int, threshold: float
) -> list[tuple[str, float]]:
    """Share of the neighbours' weight behind each label of `group`.

    For `type` only neighbours with a type label count; for the other groups every neighbour
    that was triaged at all (any label of labels.toml) counts, so silence is a vote for none.
    """
    allowed = set(labels.proposable(group))  # type: ignore[arg-type]
    if not allowed:
        return []
    known = labels.all_names()
    shares: Counter[str] = Counter()
    total = 0.0
    used = 0
    top = neighbors[0].score if neighbors else 1.0
    for cand in neighbors:
        relevant = allowed if group == "type" else known
        mine = labels.known(cand.issue.labels)  # as labels.toml spells them
        if not any(lab in relevant for lab in mine):
            continue
        weight = (cand.score / top) ** 2 if top > 0 else 1.0
        total += weight
        for lab in mine:
            if lab in allowed:
                shares[lab] += weight
        used += 1
        if used >= k:
            break
    if total <= 0 or used < 2:
        return []
    ranked = [(lab, v / total) for lab, v in shares.most_common() if v / total >= threshold]
    return ranked[: labels.limit(group)]  # type: ignore[arg-type]


@dataclass
class LabelAnswer:
    """What the engine proposes per group, with the confidence, tier and outcome of each."""

    proposed: dict[str, list[str]] = field(default_factory=dict)
    confidence: dict[str, float] = field(default_factory=dict)
    tiers: dict[str, LabelTier] = field(default_factory=dict)
    modes: dict[str, str] = field(default_factory=dict)
    groups: dict[str, GroupOutcome] = field(default_factory=dict)
    unmeasured: dict[str, int] = field(default_factory=dict)  # group -> labelled issues
    # the groups that vote because their history is too short to learn (not by configuration)
    unlearned: set[str] = field(default_factory=set)
    # group -> why it proposes nothing, in plain words (the comment's "Why")
    plain: dict[str, str] = field(default_factory=dict)

    def fields(self) -> dict:
        """The Decision fields of the label groups."""
        out: dict = {}
        for group in GROUPS:
            names = self.proposed.get(group, [])
            if group in SINGLE:
                out[group] = names[0] if names else None
            else:
                out[group + "s"] = names
        return out


def answer(
    context: Context,
    labels: LabelsConfig,
    config: Config,
    options: SimilarConfig,
    model: LabelModel | None,
    probs: dict[str, dict[str, float]],
    neighbors: list[Candidate],
) -> LabelAnswer:
    """Every configured group's proposal for `context.issue`."""
    rule = tiers.TierRule.of(config.labels)
    out = LabelAnswer()
    for group in GROUPS:
        if not labels.proposable(group):  # type: ignore[arg-type]
            continue
        gm = model.groups.get(group) if model is not None else None
        if gm is not None and gm.mode == "learned":
            out.modes[group] = "learned"
            choice = tiers.choose(
                gm.table,
                probs.get(group, {}),
                single=group in SINGLE,
                limit=labels.limit(group),  # type: ignore[arg-type]
                rule=rule,
            )
            if not choice.measured:
                out.unmeasured[group] = gm.issues
            method = gm.table.method if choice.measured and gm.table else "not measured"
            out.groups[group] = GroupOutcome(
                mode="learned",
                method=method,
                issues=gm.issues,
                bounds=choice.bounds,
                abstained=choice.abstained,  # type: ignore[arg-type]
                reason=choice.reason,
            )
            if not choice.chosen:
                out.plain[group] = plain_reason(choice)
            for name, p, info in choice.chosen:
                out.confidence[name] = round(p, 3)
                out.tiers[name] = info
            out.proposed[group] = [n for n, _, _ in choice.chosen]
            continue
        out.modes[group] = "vote"
        why_neighbours = gm.reason if gm is not None else "[labels] model = vote"
        if gm is not None:
            out.unlearned.add(group)
        chosen, reason, plain = _voted(context, labels, config, options, group, neighbors)
        if chosen and not rule.allows("possible"):
            chosen, reason = [], f"the vote is not measured; [labels] propose = {rule.propose}"
            plain = UNMEASURED_NEIGHBOURS
        if not chosen:
            out.plain[group] = plain
        out.groups[group] = GroupOutcome(
            mode="vote",
            method=f"vote ({why_neighbours})",
            abstained="" if chosen else ("tier" if reason.startswith("the vote") else "vote"),
            reason="" if chosen else reason,
        )
        for name, conf in chosen:
            out.confidence[name] = round(conf, 3)
            out.tiers[name] = LabelTier(tier="possible", source="vote")
        out.proposed[group] = [n for n, _ in chosen]
    return out


def _voted(
    context: Context,
    labels: LabelsConfig,
    config: Config,
    options: SimilarConfig,
    group: str,
    neighbors: list[Candidate],
) -> tuple[list[tuple[str, float]], str, str]:
    """The vote's labels for `group` (areas boosted by the likely files), or why none (the
    decision's reason, and in plain words)."""
    every = neighbour_labels(labels, group, neighbors, options.neighbors, 0.0)
    if group == "area" and context.likely_files and config.code.area_boost > 0:
        every = boost_areas(every, context, labels, config.code.area_boost)
    chosen = [(n, c) for n, c in every if c >= options.min_confidence]
    if chosen:
        return chosen, "", ""
    if not every:
        known = labels.all_names()
        triaged = sum(1 for c in neighbors if any(n in known for n in labels.known(c.issue.labels)))
        if group != "type" and triaged >= 2:
            article = "an" if group[0] in "aeiou" else "a"
            why = f"none of the similar earlier issues has {article} {group} label"
            return [], why, why
        why = "too few similar labelled earlier issues to vote"
        return [], why, "too few similar earlier issues carry labels"
    best, share = every[0]
    reason = (
        f"similar earlier issues do not agree (`{best}` has {share:.0%} of the vote, "
        f"needs {options.min_confidence:.0%})"
    )
    return [], reason, f"similar earlier issues disagree (the most common is `{best}`)"


def plain_reason(choice: tiers.Choice) -> str:
    """Why a learned group proposes nothing, in plain words."""
    info = choice.guess_info
    guess = f"the best guess `{choice.guess}`"
    if choice.abstained == "below floor" and info is not None:
        counts = f"on this repository's history ({info.correct:,} of {info.proposals:,})"
        if not info.correct:
            return f"{guess} was never right at this confidence {counts}"
        tenths = tiers.in_tenths(info.precision or 0.0)
        right = f"right only {tenths} in 10 times" if tenths else "rarely right"
        return f"{guess} is {right} at this confidence {counts}, too rarely to propose"
    if choice.abstained == "below floor":
        return f"{guess} is less sure than any guess measured on this repository's history"
    if choice.abstained == "tier" and info is not None:
        right = tiers.in_tenths(info.precision or 0.0)
        return (
            f"{guess} is only {TIER_WORDS[info.tier]} (right {right} in 10 times at this "
            "confidence), less sure than this repository asks for"
        )
    if choice.abstained == "tier":
        return (
            "how often its guesses are right is not measured yet, and only "
            "measured labels are proposed"
        )
    return "no label stands out"


def why_notes(
    answer: LabelAnswer,
    labels: LabelsConfig,
    history: int | None,
    filled: set[str] | frozenset[str] = frozenset(),
) -> list[str]:
    """The plain notes of the comment's "Why" on the labels: each configured group that
    proposes nothing and why, a group that voted for want of history (neither said of the
    `filled` groups, which the issue's labels already answer), and how much history the labels
    came from (`history` labelled issues, None without a learned model)."""
    configured = [g for g in GROUPS if labels.proposable(g)]  # type: ignore[arg-type]
    if not configured:
        return ["No label is proposed: the label set marks none to propose."]
    notes = []
    for group in configured:
        if group in filled:
            continue
        if answer.proposed.get(group):
            # each voted label's own line says where it came from; this says why
            if group in answer.unlearned:
                notes.append(f"{group}: too few labelled earlier issues to learn it from yet.")
        else:
            why = answer.plain.get(group, "nothing stands out")
            notes.append(f"{group}: not proposed — {why}.")
    learned = [g for g, m in answer.modes.items() if m == "learned"]
    if history is not None and learned:
        # "not measured yet" only of the groups that propose something new: why at most "possible"
        proposing = [g for g in learned if answer.proposed.get(g) and g not in filled]
        unmeasured = {g: n for g, n in answer.unmeasured.items() if g in proposing}
        note = f"The labels were learned from {history:,} labelled earlier issues"
        if unmeasured and set(unmeasured) == set(proposing):
            note += "; how often they are right is not measured yet, so they are at most “possible”"
        notes.append(note + ".")
        if unmeasured and set(unmeasured) != set(proposing):
            notes += [
                f"{g}: learned from {n:,} labelled issues, not measured yet, so at most “possible”."
                for g, n in unmeasured.items()
            ]
    return notes
