"""The engine's decision: its schema, and validation against the label set and the tracker."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from issue_assistant import forms
from issue_assistant.asking import IsMaintainer, kept_questions
from issue_assistant.config.labels import GROUPS, LabelsConfig
from issue_assistant.tracker.base import Tracker
from issue_assistant.tracker.models import MAINTAINER_ASSOCIATIONS, Issue

# Bounds on what a model may write (also in `answer_schema`, as maxLength and maxItems).
SUMMARY_MAX = 600
QUESTION_MAX = 300
REASON_MAX = 400
QUESTIONS_MAX = 5
NAME_MAX = 200  # an engine or model name, a dropped label
FILES_MAX = 5  # the checkout's files an engine may propose
PATH_MAX = 300
WHY_MAX = 300  # one note of the comment's "Why" section
WHY_NOTES = 12  # the most notes a proposal keeps


def shorten(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters, at a word where one is near, marked with `…`.

    The cut may leave a code span or link open: whatever shows the text sanitizes it after this.
    """
    if len(text) <= limit:
        return text
    cut = text[: max(limit - 1, 0)]
    space = cut.rfind(" ", max(0, len(cut) - 40))
    return (cut[:space] if space > 0 else cut).rstrip() + "…"


def _encodable(text: str) -> str:
    """`text` with lone surrogates (not valid Unicode: no JSON reader takes them back) as `?`."""
    return text.encode("utf-8", "replace").decode("utf-8")


def bounded(limit: int) -> Any:
    """A string type that is cut to `limit` characters (a model's overlong text is not an error)."""
    return Annotated[
        str, BeforeValidator(lambda v: shorten(_encodable(v), limit) if isinstance(v, str) else v)
    ]


def _questions(value: Any) -> Any:
    if not isinstance(value, list):
        return value
    return [q for q in value if not (isinstance(q, str) and not q.strip())][:QUESTIONS_MAX]


Summary = bounded(SUMMARY_MAX)
Reason = bounded(REASON_MAX)
Name = bounded(NAME_MAX)
Questions = Annotated[list[bounded(QUESTION_MAX)], BeforeValidator(_questions)]


def _files(value: Any) -> Any:
    if not isinstance(value, list):
        return value
    out = []
    for v in value:
        if isinstance(v, str) and v.strip() and v not in out:
            out.append(v)
    return out[:FILES_MAX]


Files = Annotated[list[bounded(PATH_MAX)], BeforeValidator(_files)]


def _notes(value: Any) -> Any:
    if not isinstance(value, list):
        return value
    return [n for n in value if not (isinstance(n, str) and not n.strip())][:WHY_NOTES]


Notes = Annotated[list[bounded(WHY_MAX)], BeforeValidator(_notes)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Duplicate(_Model):
    number: int
    reason: Reason = ""
    confidence: float = Field(default=0.0, ge=0.0, le=1.0)


class Usage(_Model):
    """What one issue cost and how the engine got there (failures by class: engines/failures.py)."""

    latency_s: float = 0.0
    tokens_in: int = 0
    tokens_out: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float = 0.0
    # False when a model's price is unknown: cost_usd then counts only what is known.
    cost_known: bool = True
    tool_calls: int = 0
    turns: int = 0
    forced_submit: bool = False
    reasks: int = 0
    retries: int = 0
    verify_calls: int = 0
    # The class of the engine's failure, when the fallback answered (or nothing did).
    failure: Literal["transient", "schema", "limit", "setup", "unknown", "crash"] | None = None


Tier = Literal["high", "likely", "possible"]
TIERS: tuple[Tier, ...] = ("high", "likely", "possible")
# The one scale of words for how sure a proposed label is: the comment, the job summary, the
# backlog report and `--json` (`confidence_words`) all say it so.
TIER_WORDS: dict[Tier, str] = {"high": "very likely", "likely": "likely", "possible": "possible"}
# An engine's own confidence (an LLM's, not measured) from which it is "high" or "likely".
CONFIDENCE_HIGH = 0.9
CONFIDENCE_LIKELY = 0.7


def in_tenths(precision: float) -> int:
    """N of "right N in 10 times", rounded down (0.96 is 9 in 10, not 10)."""
    return int(precision * 10 + 1e-9)


def tier_of(confidence: float) -> Tier:
    """The tier of an engine's own (unmeasured) confidence in [0, 1]."""
    if confidence >= CONFIDENCE_HIGH:
        return "high"
    return "likely" if confidence >= CONFIDENCE_LIKELY else "possible"


class LabelTier(_Model):
    """How sure a proposed label is: its tier and, where measured, the out-of-fold precision of
    its confidence bucket on this repository's history (`correct` right of `proposals`)."""

    tier: Tier
    precision: float | None = Field(default=None, ge=0, le=1)
    # The 90% (Wilson) interval of that precision.
    lower: float | None = Field(default=None, ge=0, le=1)
    upper: float | None = Field(default=None, ge=0, le=1)
    correct: int = Field(default=0, ge=0)
    proposals: int = Field(default=0, ge=0)
    # "learned" (the label model), "vote" (similar issues' labels), "form" (the issue form's
    # answer naming it): where the label came from.
    source: Literal["learned", "vote", "form"] = "learned"

    @property
    def tenths(self) -> int | None:
        """N of "right N in 10 times" (`in_tenths`), None where not measured."""
        return None if self.precision is None else in_tenths(self.precision)


class Bounds(_Model):
    """The lowest confidence from which a proposal is possible, likely, high (None: never)."""

    possible: float | None = Field(default=None, ge=0, le=1)
    likely: float | None = Field(default=None, ge=0, le=1)
    high: float | None = Field(default=None, ge=0, le=1)


class GroupOutcome(_Model):
    """One label group of a `similar` decision: how it was answered and, when nothing was
    proposed, why (`abstained`: a short kind; `reason`: the words the summary uses)."""

    mode: Literal["learned", "vote"]
    # "time-ordered", "stratified" (measured out of fold), "not measured", or "vote".
    method: str = ""
    issues: int = Field(default=0, ge=0)
    # Per label ("" for a single-label group's top label), the confidence bounds of the tiers.
    bounds: dict[str, Bounds] = Field(default_factory=dict)
    abstained: Literal["", "below floor", "tier", "vote", "none"] = ""
    reason: Reason = ""


class Proposal(_Model):
    """The proposed labels, by group, and the possible duplicate (names of `labels.toml`)."""

    type: str | None = None
    areas: list[str] = Field(default_factory=list)
    topics: list[str] = Field(default_factory=list)
    priority: str | None = None
    duplicate: Duplicate | None = None
    questions: Questions = Field(default_factory=list)
    summary: Summary = ""
    engine: Name = ""
    model: Name = ""
    # Per proposed label, the engine's confidence (a calibrated probability for `similar`).
    confidence: dict[str, float] = Field(default_factory=dict)
    # Per proposed label of the `similar` engine, its tier and measured precision.
    tiers: dict[str, LabelTier] = Field(default_factory=dict)
    # Short plain notes for maintainers, shown only in the comment's "Why" section: what was
    # not proposed and why, how much history the labels were learned from, the evidence used.
    why: Notes = Field(default_factory=list)

    def labels(self) -> list[str]:
        """Every proposed label, type first."""
        out = [self.type] if self.type else []
        out += self.areas + self.topics
        if self.priority:
            out.append(self.priority)
        return out

    def words(self) -> dict[str, str]:
        """Each proposed label's confidence in words (`TIER_WORDS`): its measured tier, else the
        engine's own confidence; a label with neither has no word."""
        out = {}
        for name in self.labels():
            if name in self.tiers:
                out[name] = TIER_WORDS[self.tiers[name].tier]
            elif name in self.confidence:
                out[name] = TIER_WORDS[tier_of(self.confidence[name])]
        return out

    def group_labels(self, group: str) -> list[str]:
        if group in ("type", "priority"):
            value = self.type if group == "type" else self.priority
            return [value] if value else []
        return list(getattr(self, group + "s"))


class Decision(Proposal):
    """What an engine proposes for one issue, with how it got there."""

    usage: Usage = Field(default_factory=Usage)
    strategy: str = ""
    # The engine that failed when the fallback engine gave this decision.
    fallback_from: str | None = None
    dropped: list[str] = Field(default_factory=list)
    candidates: list[int] = Field(default_factory=list)
    # The `similar` engine: every learned label's probability by group (for evaluate's threshold
    # table), which model answered each group ("learned" or "vote"), and the calibration used.
    probabilities: dict[str, dict[str, float]] = Field(default_factory=dict)
    label_model: dict[str, str] = Field(default_factory=dict)
    calibration: str = ""
    # The checkout's files the engine proposes as likely to need the fix, best first (only paths
    # the code index holds are kept: `engines.prompt.check_answer`). Measured by `evaluate`.
    files: Files = Field(default_factory=list)
    # The `similar` engine: the duplicate threshold it applied and where it came from: `config`
    # ([duplicates] threshold), `calibrated` (on this repository's known duplicates) or `prior`
    # (the shared data's, for a repository with too few); `calibration` says it in words.
    duplicate_threshold: float | None = None
    duplicate_threshold_source: Literal["config", "calibrated", "prior"] | None = None
    # Per label group labels.toml configures: thresholds, tier bounds and why it abstained.
    label_groups: dict[str, GroupOutcome] = Field(default_factory=dict)


class FileLink(BaseModel):
    """A likely file: its path in the checkout, a line, a link at the checked-out commit, why
    (each signal's reason) and the precision measured for files like it."""

    model_config = ConfigDict(extra="forbid")

    path: str
    line: int | None = None
    url: str | None = None
    reason: str = ""
    why: list[bounded(200)] = Field(default_factory=list, max_length=6)
    confidence: float | None = Field(default=None, ge=0, le=1)
    standing: bounded(100) = ""  # what the confidence is of ("a file ranked second", ...)


class SeeAlso(BaseModel):
    """An answered discussion that clearly matches the issue (never a duplicate)."""

    model_config = ConfigDict(extra="forbid")

    number: int
    title: str
    similarity: float = 0.0


def _canonical(tracker: Tracker, number: int, limit: int = 10) -> int:
    """Follow duplicate_of links to the original (bounded, cycle-safe)."""
    seen = {number}
    for _ in range(limit):
        try:
            nxt = tracker.get_issue(number).duplicate_of
        except KeyError:
            return number
        if nxt is None or nxt in seen:
            return number
        seen.add(nxt)
        number = nxt
    return number


def filter_labels(
    proposed: dict[str, list[str]], labels: LabelsConfig
) -> tuple[dict[str, list[str]], list[str]]:
    """Per group, the proposed labels that `labels.toml` allows, within the group's limit.

    Returns the kept labels by group and the dropped ones (unknown, never proposed, over limit).
    """
    out: dict[str, list[str]] = {}
    dropped: list[str] = []
    for group in GROUPS:
        allowed = set(labels.proposable(group))  # type: ignore[arg-type]
        kept: list[str] = []
        for name in proposed.get(group, []):
            name = labels.canonical(name) or name  # a model answering `Bug` means `bug`
            if name not in allowed:
                dropped.append(name)
            elif name not in kept:
                kept.append(name)
        limit = labels.limit(group)  # type: ignore[arg-type]
        dropped += kept[limit:]
        out[group] = kept[:limit]
    return out, dropped


def validate(
    decision: Decision,
    labels: LabelsConfig,
    tracker: Tracker | None,
    issue: Issue,
    answers: forms.Answers | None = None,
) -> Decision:
    """`decision` made to obey the label set and the tracker; what was cut is in `dropped`.
    `answers`: the issue form's answers (read from the body when not given)."""
    kept, dropped = filter_labels({g: decision.group_labels(g) for g in GROUPS}, labels)
    # A group the issue already fills (a type set by an issue form, say) gets nothing more.
    out: dict[str, list[str]] = {}
    for group, names in kept.items():
        have = [lab for lab in issue.labels if labels.group_of(lab) == group]
        room = max(labels.limit(group) - len(have), 0)  # type: ignore[arg-type]
        out[group] = [n for n in names if n not in have][:room]
    dropped = list(decision.dropped) + dropped
    duplicate = decision.duplicate
    if duplicate is not None:
        duplicate = _valid_duplicate(duplicate, tracker, issue)
    # The bounds again: a decision made with model_copy or model_construct skipped the types'.
    questions = [shorten(q.strip(), QUESTION_MAX) for q in decision.questions if q and q.strip()][
        :QUESTIONS_MAX
    ]
    # Only what is still missing, and nothing on an issue people already discuss.
    types = [*(out["type"] or []), *(n for n in issue.labels if labels.group_of(n) == "type")]
    questions, not_asked = kept_questions(
        questions, labels, types, issue, _maintainer_check(tracker), answers
    )
    why = [*decision.why, *(w for w in not_asked if w not in decision.why)]
    dropped = [shorten(name, NAME_MAX) for name in dropped[:50]]
    kept_names = {n for names in out.values() for n in names}
    return decision.model_copy(
        update={
            "tiers": {n: t for n, t in decision.tiers.items() if n in kept_names},
            "type": (out["type"] or [None])[0],
            "areas": out["area"],
            "topics": out["topic"],
            "priority": (out["priority"] or [None])[0],
            "duplicate": duplicate,
            "questions": questions,
            "summary": shorten(decision.summary, SUMMARY_MAX),
            "why": [shorten(n, WHY_MAX) for n in why if n and n.strip()][:WHY_NOTES],
            "dropped": dropped,
        }
    )


def as_json(decision: Decision) -> dict[str, Any]:
    """The decision as `--json` prints it: its fields, and each proposed label's confidence in
    words beside the numbers (`confidence_words`)."""
    return {**decision.model_dump(mode="json"), "confidence_words": decision.words()}


def _maintainer_check(tracker: Tracker | None) -> IsMaintainer:
    """Whether a login is a maintainer's (the tracker's list, else GitHub's association)."""
    if tracker is None:
        return lambda login, association: association in MAINTAINER_ASSOCIATIONS

    def check(login: str, association: str | None) -> bool:
        return tracker.repository.is_maintainer(login, association)

    return check


def _valid_duplicate(dup: Duplicate, tracker: Tracker | None, issue: Issue) -> Duplicate | None:
    if tracker is None or dup.number == issue.number:
        return None
    try:
        original = tracker.get_issue(dup.number)
    except KeyError:
        return None
    if original.is_pull_request or original.created_at >= issue.created_at:
        return None
    canonical = _canonical(tracker, dup.number)
    if canonical != dup.number:
        try:
            root = tracker.get_issue(canonical)
        except KeyError:
            return dup
        if root.is_pull_request or root.created_at >= issue.created_at:
            return dup
        reason = f"{dup.reason} (#{dup.number} is itself a duplicate of #{canonical})".strip()
        return dup.model_copy(update={"number": canonical, "reason": reason})
    return dup


def answer_schema(labels: LabelsConfig) -> dict:
    """The JSON schema an engine's answer must follow, with label names as enums."""

    def names(group: str) -> list[str]:
        return labels.proposable(group)  # type: ignore[arg-type]

    # A group with no proposable label allows only null or []: an empty enum is not valid
    # JSON schema, and llama.cpp's grammar builder fails on it.
    def one_of(group: str) -> dict:
        if not names(group):
            return {"type": "null"}
        return {"anyOf": [{"type": "string", "enum": names(group)}, {"type": "null"}]}

    def many(group: str, limit: int) -> dict:
        if not names(group):
            return {"type": "array", "maxItems": 0}
        return {
            "type": "array",
            "items": {"type": "string", "enum": names(group)},
            "uniqueItems": True,
            "maxItems": limit,
        }

    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["type", "areas", "topics", "priority", "duplicate", "questions", "summary"],
        "properties": {
            "type": one_of("type"),
            "areas": many("area", labels.max_areas),
            "topics": many("topic", labels.max_topics),
            "priority": one_of("priority"),
            "duplicate": {
                "anyOf": [
                    {
                        "type": "object",
                        "additionalProperties": False,
                        "required": ["number", "reason", "confidence"],
                        "properties": {
                            "number": {"type": "integer"},
                            "reason": {"type": "string", "maxLength": REASON_MAX},
                            "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                        },
                    },
                    {"type": "null"},
                ]
            },
            "questions": {
                "type": "array",
                "items": {"type": "string", "maxLength": QUESTION_MAX},
                "maxItems": QUESTIONS_MAX,
            },
            "summary": {"type": "string", "maxLength": SUMMARY_MAX},
            "files": {
                "type": "array",
                "items": {"type": "string", "maxLength": PATH_MAX},
                "uniqueItems": True,
                "maxItems": FILES_MAX,
            },
        },
    }
