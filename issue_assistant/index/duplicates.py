"""Is the new issue a duplicate of a candidate? A pairwise score from several signals.

The signals of a (new issue, candidate) pair: dense cosine (when embeddings are on), the BM25
rank, TF-IDF cosine of the cleaned titles and of the prose, the overlap of error lines,
exception names, frames, paths and identifiers, the same error message and the share of the
stack frames nearest the error in common (each weighed by how rare it was in the earlier
issues, `evidence.Rarity`; frames count again when the candidate is open: a crash matching an
open issue's frames is the strongest case), and the candidate's state and age at the moment.
They are combined by a hand-weighted logistic function (too few known duplicate pairs exist in
the shared data to fit one), so the score lies in (0, 1). A claim rests on evidence, never on
shared title words alone (`PairFeatures.carried`: an error, frames, a file or a name in common,
alike titles about one subject, or a strong match in meaning with a second signal), and a
port, backport or follow-up of the candidate is related, never its duplicate
(`evidence.follow_up`): elsewhere the score a claim rests on is 0 (`PairFeatures.claim`,
`claims`). `calibrate` fits the threshold for a target precision on those claim scores;
`choose` applies it, refusing a best candidate that others match nearly as well (a templated or
tracking issue must not flood proposals); `reason` says why in words, quoting the strongest
piece the two share (`evidence.strongest`).

The prose and signals are read without the repository's boilerplate lines (an unfilled Markdown
template, `index/boilerplate.py`), and an issue without words of its own (a title like "Hi" over
an untouched template, `has_own_words`) is never called a duplicate.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, TypeVar

import numpy as np

from issue_assistant.index.evidence import (
    MIN_SPECIFIC,
    Rarity,
    Shared,
    Traits,
    follow_up,
    shared,
    strongest,
    traits,
)
from issue_assistant.index.query import (
    _URL,
    STOPWORDS,
    Signals,
    clean_title,
    problem_text,
    signals,
    strip_template,
)
from issue_assistant.index.search import cosine
from issue_assistant.tracker.duplicates import filed_again
from issue_assistant.tracker.models import Issue

if TYPE_CHECKING:
    from datetime import datetime

    from issue_assistant.index.boilerplate import Boilerplate
    from issue_assistant.index.candidates import Candidate, Searched
    from issue_assistant.index.search import IssueIndex

# The version of the features and hand weights below: a threshold calibrated on another
# version's hand-weighted score does not apply to this one (2: shared errors, frames, rarity;
# 3: a claim rests on evidence and no follow-up is claimed, `PairFeatures.claim`; 4: rarity
# counts every word of a piece, not any, and alike titles whose words both bodies use carry;
# 5: a quoted name stays in an error message, `traces.message_key`; 6: a link's host is no
# name, the same linked page is evidence of its own, `evidence.link_key`; 7: an error raised
# from another is no evidence, its cause is, `traces.raised_from`, and a stack's innermost
# frames are its innermost in traces that list them first, .NET's read too, `traces.frames`;
# 8: the same uncommon error counts again when the candidate is open, as its frames do).
# A report filed again by its reporter is claimed whatever the score (`PairFeatures.refiled`),
# so the rule leaves every threshold where it was.
SCORE_VERSION = 8
# Weights of the logistic score, with and without a dense cosine.
WITH_DENSE = {
    "bias": -8.0,
    "dense": 6.0,
    "title": 2.5,
    "prose": 1.5,
    "signals": 0.5,
    "bm25_top": 0.6,
    "open": 1.5,
    "age": -0.25,
    "error": 2.0,
    "frames": 1.5,
    "error_open": 2.0,
    "frames_open": 2.0,
}
LEXICAL = {
    "bias": -6.0,
    "title": 4.0,
    "prose": 3.0,
    "signals": 0.5,
    "bm25_top": 0.8,
    "open": 1.5,
    "age": -0.25,
    "error": 2.0,
    "frames": 1.5,
    "error_open": 2.0,
    "frames_open": 2.0,
}
DEFAULT_MARGIN = 0.05
T = TypeVar("T")  # what `choose` picks among: candidates, or their numbers
MIN_OWN_WORDS = 3
# An error message counts again for an open candidate only this uncommon (`Rarity.message`: a
# handful of earlier issues hold its words): one that recurs with many causes (a checksum
# mismatch, a file not found at some URL) says little more for being open.
UNCOMMON_ERROR = 0.75
CLOSE_MEANING = 0.75  # a dense cosine this high reads as "close in meaning"
# Without a shared error, frames, path or name, a claim needs a strong match in meaning (a dense
# cosine this high) or in the reporter's own words (a prose TF-IDF cosine this high), and a
# second signal a reader can check (`PairFeatures.carried`).
STRONG_DENSE = 0.8
STRONG_PROSE = 0.5
# Or: what both are about (`Shared.subject`, uncommon words both titles and both bodies use,
# none only one title has) with titles this alike (TF-IDF cosine): "Support cloud storage in
# load_dataset" and "Support cloud storage for loading datasets"; not "Clean dead code in the
# JIT" and "... in the GC", whose titles differ in what they are about.
TOPIC_TITLE = 0.7


@dataclass(frozen=True)
class PairFeatures:
    dense: float | None
    title: float
    prose: float
    signals: float
    bm25_top: float
    open: float
    age: float
    # the same error message (weighed by how rare it is); the share of the innermost stack
    # frames in common (weighed by theirs); each again when the candidate is open (a crash
    # whose uncommon error or frames match an open issue's: the strongest case)
    error: float = 0.0
    frames: float = 0.0
    error_open: float = 0.0
    frames_open: float = 0.0
    # what the two share, for the reason and the comment's table (not a feature)
    evidence: Shared = field(default_factory=Shared, compare=False, repr=False)
    # one is a port, backport or follow-up of the other: related, never a duplicate (not a
    # feature)
    follow_up: bool = field(default=False, compare=False)
    # the new issue is the candidate filed again by its reporter minutes later
    # (`tracker.duplicates.filed_again`): a duplicate whatever the score (not a feature)
    refiled: bool = field(default=False, compare=False)

    @property
    def carried(self) -> bool:
        """Whether evidence carries a duplicate claim, never title words alone: the report filed
        again by its reporter; the same uncommon error message, stack frames, or an uncommon
        path, linked page or name in common; alike titles whose uncommon words both bodies use too
        (`Shared.subject`, `TOPIC_TITLE`); or a strong match in meaning or prose with a second
        signal a reader can check (two uncommon title words, an exception, or alike titles)."""
        e = self.evidence
        if self.refiled:
            return True
        if self.error >= MIN_SPECIFIC or self.frames > 0.0 or e.paths or e.links or e.identifiers:
            return True
        if e.subject and self.title >= TOPIC_TITLE:
            return True
        strong = (self.dense or 0.0) >= STRONG_DENSE or self.prose >= STRONG_PROSE
        second = len(e.title_words) >= 2 or bool(e.exceptions) or self.title >= 0.5
        return strong and second

    @property
    def claimable(self) -> bool:
        """Whether the pair may be claimed a duplicate at all (`carried`, and no follow-up)."""
        return self.carried and not self.follow_up

    def claim(self, weights: dict[str, float] | None = None) -> float:
        """The score a duplicate claim rests on: `score` where the pair is `claimable`, else 0
        (what `choose` thresholds; the comment still shows the pair as possibly related); 1 for
        a report filed again, a duplicate by the reporter's own doing."""
        if not self.claimable:
            return 0.0
        return 1.0 if self.refiled else self.score(weights)

    def score(self, weights: dict[str, float] | None = None) -> float:
        """The logistic score: `calibrate`'s fitted weights when given (and usable for this
        pair: fitted with a dense cosine the pair lacks, they are not), else the hand weights."""
        w = weights
        if w is None or ("dense" in w and self.dense is None):
            w = WITH_DENSE if self.dense is not None else LEXICAL
        z = w["bias"] + sum(
            w[k] * getattr(self, k) for k in w if k != "bias" and getattr(self, k) is not None
        )
        return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))

    def row(self, keys: tuple[str, ...]) -> list[float]:
        """The values of `keys`, for fitting weights."""
        return [float(getattr(self, k) or 0.0) for k in keys]


def own_body(issue: Issue, boiler: Boilerplate | None, moment: datetime | None) -> str:
    """The body without the lines that were boilerplate at `moment`."""
    return boiler.strip(issue.body or "", moment) if boiler is not None else issue.body or ""


_OWN_WORD = re.compile(r"\w{2,}")


def _own_words(text: str) -> set[str]:
    """Words in any script (a run of CJK characters counts as one), stop words and numbers out."""
    words = (w.lower() for w in _OWN_WORD.findall(_URL.sub(" ", text)))
    return {w for w in words if w not in STOPWORDS and not w.isdigit()}


def has_own_words(issue: Issue, body: str) -> bool:
    """Whether the issue says something of its own: a word in its cleaned title, and
    `MIN_OWN_WORDS` distinct words (or 12 letters) in the title and prose together ("Hi" over
    an untouched template: no)."""
    title = _own_words(clean_title(issue.title))
    both = title | _own_words(strip_template(body))
    return bool(title) and (len(both) >= MIN_OWN_WORDS or sum(map(len, both)) >= 12)


@dataclass(frozen=True)
class Side:
    """What the pair features read of one issue, computed once per issue (the new issue's side
    serves every candidate): its body without boilerplate, title and prose TF-IDF, signals."""

    body: str
    title: dict[str, float]
    prose: dict[str, float]
    signals: Signals
    traits: Traits


# The most sides an index keeps (`side`; all are dropped when it is full): enough for the
# candidates of an evaluate run, few enough that the memory they hold stays small (each keeps its
# body, two TF-IDF vectors and its evidence).
SIDES_KEPT = 5_000


def side(
    index: IssueIndex, issue: Issue, boiler: Boilerplate | None, moment: datetime | None
) -> Side:
    """`issue`'s side at `moment`; kept on the index (until it changes) by the issue's title and
    own body, so a candidate met again by another issue is read once."""
    body = own_body(issue, boiler, moment)
    memo = index.memo
    key = ("side", issue.number, issue.title, body)
    if key in memo:
        return memo[key]
    found = Side(
        body=body,
        title=index.vector(clean_title(issue.title), "title"),
        prose=index.vector(strip_template(body)),
        signals=signals(issue.title, body),
        traits=traits(issue.title, body),
    )
    if len(memo) >= SIDES_KEPT:
        memo.clear()
    memo[key] = found
    return found


def signal_overlap(sa: Signals, sb: Signals) -> float:
    """Shared error lines and identifiers: Jaccard of the signal sets, error lines counted x2."""
    ka, kb = sa.keys(), sb.keys()
    if not ka or not kb:
        return 0.0
    shared = len(ka & kb) + len({e.lower() for e in sa.errors} & {e.lower() for e in sb.errors})
    return min(1.0, shared / max(1, min(len(ka), len(kb))))


def features(
    index: IssueIndex,
    issue: Issue,
    cand: Candidate,
    *,
    query_vec: np.ndarray | None,
    bm25_best: float,
    boiler: Boilerplate | None = None,
    moment: datetime | None = None,
    mine: Side | None = None,
    rarity: Rarity | None = None,
) -> PairFeatures:
    """The features of (`issue`, `cand`); `mine`: the issue's side, when already computed."""
    other = cand.issue
    mine = mine or side(index, issue, boiler, moment)
    theirs = side(index, other, boiler, moment)
    dense: float | None = None
    if query_vec is not None and index.sentences is not None:
        if cand.dense is not None:
            dense = cand.dense
        else:
            vec = index.sentences.vector(other.number)
            # no vector for the candidate yet: the lexical weights apply
            dense = float(vec @ query_vec) if vec is not None else None
    age_days = max((issue.created_at - other.created_at).total_seconds(), 0) / 86400
    both = shared(mine.traits, theirs.traits)
    is_open = 1.0 if other.state == "open" else 0.0
    rarity = rarity or Rarity(index, moment or issue.created_at)
    error = max((rarity.message(k) for k in both.error_keys), default=0.0)
    frames = (
        both.frame_overlap * sum(map(rarity.frame, both.inner_frames)) / len(both.inner_frames)
        if both.inner_frames
        else 0.0
    )
    return PairFeatures(
        follow_up=follow_up(issue.title, issue.body or "", other.number, other.title),
        refiled=filed_again(other, issue),
        dense=dense,
        title=cosine(mine.title, theirs.title),
        prose=cosine(mine.prose, theirs.prose),
        signals=signal_overlap(mine.signals, theirs.signals),
        bm25_top=cand.bm25 / bm25_best if bm25_best > 0 else 0.0,
        open=is_open,
        age=math.log1p(age_days / 30),
        error=error,
        frames=frames,
        error_open=error * is_open if error >= UNCOMMON_ERROR else 0.0,
        frames_open=frames * is_open,
        evidence=both.specific(rarity),
    )


@dataclass(frozen=True)
class Assessed:
    """A candidate with its pair features, duplicate score and the score a claim rests on
    (`PairFeatures.claim`: 0 without evidence, or for a port or follow-up)."""

    candidate: Candidate
    features: PairFeatures
    score: float
    claim: float = 0.0


def assess(
    context: Searched, limit: int | None = None, weights: dict[str, float] | None = None
) -> list[Assessed]:
    """Every candidate of the context (or the first `limit`) with its features and duplicate
    score, best first (the features are computed once per context and limit)."""
    out = [
        Assessed(c, f, f.score(weights), f.claim(weights)) for c, f in pair_features(context, limit)
    ]
    return sorted(out, key=lambda a: -a.score)


def score_candidates(
    context: Searched, limit: int | None = None, weights: dict[str, float] | None = None
) -> list[tuple[Candidate, float]]:
    """Every candidate of the context (or the first `limit`) with its duplicate score, best first.

    `calibrate` fits the threshold (and, with enough known pairs, the weights) on these scores;
    `choose` applies it.
    """
    return [(a.candidate, a.score) for a in assess(context, limit, weights)]


def claims(
    context: Searched, limit: int | None = None, weights: dict[str, float] | None = None
) -> list[tuple[Assessed, float]]:
    """Every candidate with the score a duplicate claim rests on (`PairFeatures.claim`), best
    first: what `choose` is given, by the engine and by everything that measures it."""
    return sorted(((a, a.claim) for a in assess(context, limit, weights)), key=lambda t: -t[1])


def pair_features(
    context: Searched, limit: int | None = None
) -> list[tuple[Candidate, PairFeatures]]:
    """Each candidate with its pair features; none when the issue says nothing of its own."""
    memo = context.pairs
    if memo is None:
        return _pair_features(context, limit)
    return memo.get(limit, lambda: _pair_features(context, limit))


def _pair_features(
    context: Searched, limit: int | None = None
) -> list[tuple[Candidate, PairFeatures]]:
    from issue_assistant.index.retrieval import Retriever

    cands = [c for c in context.candidates[:limit] if not c.issue.is_pull_request]
    if not cands:
        return []
    index = context.index
    boiler = index.boilerplate()
    mine = side(index, context.issue, boiler, context.as_of)
    if not has_own_words(context.issue, mine.body):
        return []
    query_vec = None
    if index.sentences is not None and len(index.sentences):
        query_vec = Retriever(index).query_vector(context.issue)
    best = max((c.bm25 for c in cands), default=0.0)
    rarity = Rarity(index, context.as_of)
    return [
        (
            c,
            features(
                index,
                context.issue,
                c,
                query_vec=query_vec,
                bm25_best=best,
                boiler=boiler,
                moment=context.as_of,
                mine=mine,
                rarity=rarity,
            ),
        )
        for c in cands
    ]


def choose(
    scored: Sequence[tuple[T, float]],
    threshold: float,
    margin: float = DEFAULT_MARGIN,
    crowd: int = 2,
) -> tuple[T, float] | None:
    """The best candidate if it clears `threshold`, unless `crowd` or more other candidates
    above the threshold come within `margin` of it (a template many reports share)."""
    if not scored or scored[0][1] < threshold:
        return None
    best = scored[0][1]
    close = [s for _, s in scored[1:] if s >= threshold and best - s < margin]
    if len(close) >= crowd:
        return None
    return scored[0]


def reason(cand: Candidate, features: PairFeatures, limit: int = 400) -> str:
    """Why `cand` is proposed as the original, in words: the one strongest piece of evidence
    the two share (`evidence.strongest`; the comment's table lists them all), at most `limit`
    characters; no score (the comment shows the confidence beside it)."""
    state = cand.issue.state
    via = f", reached through #{cand.via[0]}, a duplicate of it" if cand.via else ""
    head = f"Same problem as #{cand.issue.number} ({state}{via})"
    meaning = " and close in meaning" if (features.dense or 0.0) >= CLOSE_MEANING else ""
    if features.refiled:
        return f"{head}: the same reporter filed the same report minutes earlier."
    room = max(limit - len(head) - 40, 20)
    piece = strongest(features.evidence, min(room, 120))
    if piece:
        return f"{head}: {piece}."
    return f"{head}: worded alike{meaning}, with no error, frame or name in common."


def embedding_text(issue: Issue) -> str:
    """What is embedded for an issue (exposed for the benchmarks)."""
    return problem_text(issue.title, issue.body)


@dataclass(frozen=True)
class DuplicateSettings:
    """The duplicate score's weights (None: the hand weights), its threshold, and where the
    threshold comes from: `config` (set in config.toml), `calibrated` (on this repository's
    known duplicates) or `prior` (the shared data's, for a repository with too few)."""

    weights: dict[str, float] | None
    threshold: float
    source: Literal["config", "calibrated", "prior"]
    where: str

    def describe(self) -> str:
        """Which duplicate weights and threshold answered (the decision and report name them)."""
        fitted = "weights fit on this repository's known duplicates"
        score = fitted if self.weights else "hand weights"
        return f"duplicates: {score}, threshold {self.threshold:.2f} ({self.where})"
