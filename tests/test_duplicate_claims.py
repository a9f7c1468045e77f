"""A duplicate claim rests on evidence, never on shared title words alone, and a port,
backport or follow-up of an earlier issue is related to it, not its duplicate: on real issue
texts of the shared snapshots and on the port titles of a release-branch repository."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from issue_assistant.config.labels import LabelsConfig
from issue_assistant.config.sections import Config
from issue_assistant.engines import create
from issue_assistant.index.duplicates import (
    UNCOMMON_ERROR,
    PairFeatures,
    pair_features,
    reason,
)
from issue_assistant.index.evidence import (
    Shared,
    follow_up,
    link_key,
    shared,
    strongest,
    traits,
)
from issue_assistant.index.local import open_index
from issue_assistant.learn.duplicate_prior import load_prior
from issue_assistant.pipeline import replay
from issue_assistant.tracker.models import Issue, Repository, User
from issue_assistant.tracker.snapshot import Snapshot
from tests.test_duplicate_evidence import FILLER, T0, issue

LABELS = LabelsConfig.model_validate({"type": [{"name": "bug"}, {"name": "enhancement"}]})
# The threshold a maintainer may set low: the rule below must hold whatever the threshold.
LOW = Config.model_validate({"duplicates": {"threshold": 0.3}})


def analyzed(snap, number: int, index, config: Config = LOW):
    engine = create("similar", config, LABELS)
    return replay(snap, number, index=index, labels=LABELS, config=config, engine=engine)


# ---- what a follow-up is ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("title", "body", "other_title"),
    [
        ("[release/2.1] Port 'Remove != and == in the parser' to release", "", "Remove != and =="),
        ("Port 'Remove != and == in the parser' to release", "", ""),
        ("Clean dead code in the JIT", "Backport of #5 to 2.0.", ""),
        ("Clean dead code in the JIT", "A follow-up to #5: two more places.", ""),
        ("Upgrade fails on Windows", "I raised another issue earlier, #5.", ""),
        ("Clean dead code in the JIT", "", "[backport 1.x] Clean dead code"),
        ("Port #42 to release/6.0", "", ""),
        ("Ported the parser fix to 2.1.x", "", ""),
        ("Cherry-pick #42 into release/1.2", "", ""),
        ("[cherry-pick] Clean dead code in the JIT", "", ""),
    ],
)
def test_ports_backports_and_references_are_follow_ups(title, body, other_title):
    assert follow_up(title, body, 5, other_title)


@pytest.mark.parametrize(
    ("title", "body"),
    [
        ("Crash on load", "I have the same issue as #5, on Windows."),
        ("Crash on load", "Duplicate of #5"),
        ("Crash on load", "See #55 and #500 for the background."),
        ("[2.12.0] DatasetDict.save_to_disk not saving to S3", "A version, not a branch."),
        ("Transport error in the Portuguese dataset", "Supports port 80 only."),
        # "Port" as a noun, a port to a platform, a cherry-pick that fails: an ordinary report
        ("Port forwarding stops when the window reloads", ""),
        ("Port 8080 already in use", ""),
        ("Port forwarding to 127.0.0.1 fails", ""),
        ("Port the runtime to RISC-V", ""),
        ("Git: cherry-pick fails with conflicts", ""),
        ("Cherry-pick of a merge commit shows an empty diff", ""),
    ],
)
def test_a_version_prefix_a_same_as_another_number_or_a_port_word_is_no_follow_up(title, body):
    assert not follow_up(title, body, 5, "Crash on load")


# ---- what carries a claim ------------------------------------------------------------------

BASE = dict(dense=None, signals=0.0, bm25_top=1.0, open=1.0, age=0.0)


def test_title_words_alone_never_carry_a_claim_however_high_the_score():
    alike = PairFeatures(
        **BASE,
        title=1.0,
        prose=0.1,
        evidence=Shared(title_words=("Clean", "dead", "code")),
    )
    assert alike.score() > 0.5 and not alike.carried and alike.claim() == 0.0
    # a shared uncommon name carries it; so does a strong match in meaning with the titles
    named = PairFeatures(
        **BASE, title=1.0, prose=0.1, evidence=Shared(identifiers=("gc_heap_hard_limit",))
    )
    assert named.carried and named.claim() == named.score()
    meaning = PairFeatures(
        **{**BASE, "dense": 0.9}, title=0.6, prose=0.1, evidence=Shared(title_words=("JIT",))
    )
    assert meaning.carried
    # meaning alone, with nothing a reader can check beside it, does not
    vague = PairFeatures(**{**BASE, "dense": 0.9}, title=0.1, prose=0.1)
    assert not vague.carried
    # the same features for a follow-up: never claimable
    port = PairFeatures(
        **BASE, title=1.0, prose=0.9, evidence=Shared(identifiers=("x_y",)), follow_up=True
    )
    assert port.carried and not port.claimable and port.claim() == 0.0


@pytest.mark.parametrize(
    ("url", "key"),
    [
        ("https://arxiv.org/abs/2007.02871v1", "arxiv.org/abs/2007.02871v1"),
        ("https://arxiv.org/abs/2007.02871v1).", "arxiv.org/abs/2007.02871v1"),
        ("http://www.Example.com/a/b/#part", "example.com/a/b"),
        ("https://www.youtube.com/watch?v=abc,", "youtube.com/watch?v=abc"),
        ("https://github.com/o/r/blob/main/src/a.py#L10", "github.com/o/r/blob/main/src/a.py"),
        ("https://github.com", None),
        ("https://github.com/", None),
        ("https://github.com/o/r/issues/12", None),
        ("https://github.com/o/r/pull/3#issuecomment-1", None),
        ("https://github.com/o/r/discussions/7/", None),
        ("https://[::1/x", None),
    ],
)
def test_a_link_is_compared_by_its_page_never_by_its_host_alone(url, key):
    assert link_key(url) == key


PAPER = "## Adding a Dataset\n- **Name:** DART\n- **Paper:** {link}\n- **Motivation:** GEM"


def test_a_link_host_carries_no_claim_the_same_linked_page_does():
    """Two dataset requests worded alike that link two different papers share only the host
    (`arxiv.org`): no name in common, nothing carries a claim. The same paper linked (written
    another way: `www.`, a fragment, inside a Markdown link) carries it, quoted as the page."""
    mine = traits("Add DART dataset", PAPER.format(link="https://arxiv.org/abs/2007.02871v1"))
    other = traits("Add DART dataset", PAPER.format(link="https://arxiv.org/abs/1908.01234"))
    apart = shared(mine, other)
    assert apart.identifiers == () and apart.links == ()
    assert not PairFeatures(**BASE, title=0.6, prose=0.3, evidence=apart).carried
    same = traits(
        "DART dataset", PAPER.format(link="[paper](https://www.arxiv.org/abs/2007.02871v1#top)")
    )
    found = shared(mine, same)
    assert found.links == ("arxiv.org/abs/2007.02871v1",) and found.identifiers == ()
    assert PairFeatures(**BASE, title=0.6, prose=0.3, evidence=found).carried
    assert strongest(found) == "both link to `arxiv.org/abs/2007.02871v1`"


# ---- real issue texts ----------------------------------------------------------------------


def test_a_follow_up_by_its_reporter_is_related_not_claimed(hf_snapshot, hf_index):
    """huggingface/datasets #4916 ("Apache Beam unable to write the downloaded wikipedia
    dataset") follows the reporter's #4915 ("I had raised another issue earlier #4915"): the
    same traceback, a high score, and yet a follow-up: shown as related, not claimed."""
    result = analyzed(hf_snapshot, 4916, hf_index)
    assert result.decision.duplicate is None or result.decision.duplicate.number != 4915
    rows = {e.number: e for e in result.plan.evidence}
    assert rows[4915].relation == "related"
    assert "#4915" in result.comment.split("Possibly related")[1].split("\n")[0]


def _pair(result, number: int, limit: int | None = None) -> PairFeatures:
    """The pair features of the analysed issue and candidate `number` (among the first `limit`
    candidates, as the engine scores them, when given)."""
    return next(f for c, f in pair_features(result.context, limit) if c.issue.number == number)


def test_an_evidence_carried_pair_is_claimed_with_its_evidence(poetry_snapshot, poetry_index):
    """python-poetry #10284 is #10283 filed again by its reporter 67 seconds later: claimed as
    such, and the same certificate error, paths and names would carry the claim on their own,
    quoted as the reason; the table row keeps them all."""
    result = analyzed(poetry_snapshot, 10284, poetry_index, Config())
    dup = result.decision.duplicate
    assert dup is not None and dup.number == 10283
    assert dup.reason == "Same problem as #10283 (open): the same reporter filed the same " + (
        "report minutes earlier."
    )
    features = _pair(result, 10283)
    assert features.refiled and features.claim() == 1.0
    # without the refile, the evidence carries it: one piece, the strongest kind they share (an
    # exception: no error line, no frames)
    alone = replace(features, refiled=False)
    assert alone.carried and alone.claim() == alone.score() < 1.0
    cand = next(c for c in result.context.candidates if c.issue.number == 10283)
    why = reason(cand, alone)
    head = "Same problem as #10283 (open): both fail with `"
    assert why.startswith(head) and why.count("`") == 2
    named = why[len(head) :].split("`")[0]
    assert named in ("SSLError", "SSLCertVerificationError")
    rows = {e.number: e for e in result.plan.evidence}
    assert rows[10283].relation == "duplicate"
    assert f"`{named}`" in rows[10283].shared and "`SSL_CERT_FILE`" in rows[10283].shared


def test_the_same_rare_error_as_an_open_issue_is_claimed(hf_snapshot, hf_words):
    """huggingface/datasets #5875 ("Why split slicing doesn't behave like list slicing ?"),
    marked a duplicate of #1774, which was still open then: titles apart, the same rare error
    (`Requested slice [...] incompatible with [...] examples`). Claimed at the shipped threshold
    with the default candidates (BM25 beside the word vectors), the error quoted; the error counts
    again because #1774 was open, and the same pair with a closed original stays under it."""
    result = analyzed(hf_snapshot, 5875, hf_words, Config())
    dup = result.decision.duplicate
    assert dup is not None and dup.number == 1774
    assert dup.reason.startswith("Same problem as #1774 (open): both fail with `ValueError: ")
    assert "incompatible with" in dup.reason
    # the pair as the engine scored it: among the first `[duplicates] candidates`
    features = _pair(result, 1774, Config().duplicates.candidates)
    assert features.open == 1.0 and features.error_open == features.error > 0
    closed = replace(features, open=0.0, error_open=0.0, frames_open=0.0)
    threshold = load_prior().lexical.threshold
    assert features.claim() >= threshold > closed.claim()


def test_a_common_error_counts_no_more_for_an_open_issue(hf_snapshot, hf_words):
    """huggingface/datasets #3265 (a checksum error for kilt_tasks) and the open #726 (the same
    `NonMatchingChecksumError` for openwebtext): a message many earlier reports hold, whatever
    the dataset. It counts as a shared error, but not again for #726 being open, and the pair
    stays under the shipped threshold."""
    result = analyzed(hf_snapshot, 3265, hf_words, Config())
    features = _pair(result, 726, Config().duplicates.candidates)
    assert features.open == 1.0 and 0 < features.error < UNCOMMON_ERROR
    assert features.error_open == 0.0
    assert features.claim() < load_prior().lexical.threshold
    assert result.decision.duplicate is None or result.decision.duplicate.number != 726


def test_a_feature_request_worded_alike_is_not_claimed_on_its_title(hf_snapshot, hf_index):
    """huggingface/datasets #6560 "Support Video" and #5225 "Add video feature": alike titles,
    one title word in common and nothing else to check. No claim, at any threshold."""
    result = analyzed(hf_snapshot, 6560, hf_index, Config.model_validate({}))
    low = analyzed(
        hf_snapshot, 6560, hf_index, Config.model_validate({"duplicates": {"threshold": 0.05}})
    )
    for r in (result, low):
        assert r.decision.duplicate is None


# ---- a release-branch port --------------------------------------------------------------

CHANGE = (
    "`!=` and `==` on `ValueTuple` box both operands in `Compare.cs`; this removes the boxing "
    "in `System.Private.CoreLib/src/System/ValueTuple.cs` and adds tests for `Equals`."
)


def test_a_release_branch_port_is_related_never_a_duplicate(tmp_path):
    """The titles of a change and its port as a release-branch repository writes them (the
    pair issue 30 quotes): the same words, paths and names, and a port: related."""
    original = issue(1, "Remove != and == boxing on ValueTuple", CHANGE, 0)
    port = issue(30, "[release/2.1] Port 'Remove != and == boxing on ValueTuple'", CHANGE, 600)
    snap = Snapshot(
        Repository(full_name="o/r", fetched_at=T0 + timedelta(days=9)), [original, *FILLER, port]
    )
    index = open_index(snap, tmp_path)
    result = analyzed(snap, 30, index)
    assert result.decision.duplicate is None
    assert [e.relation for e in result.plan.evidence if e.number == 1] == ["related"]
    # the same text without the port's prefix is claimed: the evidence carries it
    twin = issue(31, "Remove != and == boxing on ValueTuple", CHANGE, 601)
    snap2 = Snapshot(
        Repository(full_name="o/r", fetched_at=T0 + timedelta(days=9)), [original, *FILLER, twin]
    )
    claimed = analyzed(snap2, 31, open_index(snap2, tmp_path / "twin"))
    assert claimed.decision.duplicate is not None and claimed.decision.duplicate.number == 1


def test_alike_titles_about_the_same_subject_carry_a_claim_sibling_titles_do_not():
    """Two uncommon words both titles and both bodies use, with alike titles, carry a claim;
    titles that differ in what they are about (a sibling task: "... in the JIT", "... in the
    GC", alike as their TF-IDF cosine may be), less alike titles, one word, or none in the
    bodies, do not."""
    subject = Shared(title_words=("cloud", "storage"), topic=("cloud", "storage"))
    alike = PairFeatures(**BASE, title=0.9, prose=0.2, evidence=subject)
    assert alike.carried and alike.claim() == alike.score()
    unlike = PairFeatures(**BASE, title=0.55, prose=0.4, evidence=subject)
    assert not unlike.carried and unlike.claim() == 0.0
    apart = Shared(
        title_words=("Clean", "dead"), topic=("Clean", "dead"), title_apart=("JIT", "GC")
    )
    sibling = PairFeatures(**BASE, title=0.85, prose=0.4, evidence=apart)
    assert not sibling.carried and sibling.claim() == 0.0
    one = Shared(title_words=("Video", "Support"), topic=("Video",))
    assert not PairFeatures(**BASE, title=0.9, prose=0.2, evidence=one).carried
    titles_only = Shared(title_words=("cloud", "storage"))
    assert not PairFeatures(**BASE, title=1.0, prose=0.2, evidence=titles_only).carried
    # a port of the other about the same subject is still only related
    port = PairFeatures(**BASE, title=0.9, prose=0.2, evidence=subject, follow_up=True)
    assert port.carried and port.claim() == 0.0


def test_a_feature_request_filed_again_about_the_same_subject_is_claimed(hf_snapshot, hf_index):
    """huggingface/datasets #5771 "Support cloud storage for loading datasets" and #5281
    "Support cloud storage in load_dataset": both titles and both descriptions are about cloud
    storage. Claimed at the shipped threshold, the reason quoting the subject."""
    result = analyzed(hf_snapshot, 5771, hf_index, Config())
    dup = result.decision.duplicate
    assert dup is not None and dup.number == 5281
    assert dup.reason.startswith("Same problem as #5281 (open): both titles and descriptions")
    assert "`cloud`" in dup.reason and "`storage`" in dup.reason


# ---- a report filed again ------------------------------------------------------------------


def test_a_report_filed_again_by_its_reporter_within_minutes_is_a_duplicate(poetry_snapshot):
    """python-poetry #10283-#10285: the same report three times in 81 seconds by one reporter
    ("please close all three issues", a maintainer wrote): #10284 and #10285 are duplicates of
    the earlier copies, whether or not anybody marked them."""
    from issue_assistant.tracker.duplicates import refiled

    again = refiled(poetry_snapshot.all_issues())
    assert again[10284] == {10283} and again[10285] == {10283, 10284}
    assert 10283 not in again


def _report(number: int, login: str, minutes: float, title: str, body: str) -> Issue:
    return issue(number, title, body, minutes).model_copy(update={"user": User(login=login)})


BODY = "Installing with a self-signed certificate fails; pip works. " * 8


@pytest.mark.parametrize(
    ("login", "minutes", "title", "body", "counted"),
    [
        ("alice", 2, "Poetry ignores my certificate", BODY, True),
        ("alice", 2, "Poetry ignores my certificate variables", BODY + " Also on 2.1.", True),
        ("bob", 2, "Poetry ignores my certificate", BODY, False),  # another reporter
        ("alice", 45, "Poetry ignores my certificate", BODY, False),  # not within minutes
        ("alice", 2, "Poetry ignores my certificate", "A different problem entirely.", False),
        ("alice", 2, "The lock file is not sorted", BODY, False),  # another title
        ("ghost", 2, "Poetry ignores my certificate", BODY, False),  # deleted accounts
    ],
)
def test_what_counts_as_filed_again(login, minutes, title, body, counted):
    from issue_assistant.tracker.duplicates import refiled

    reporter = "ghost" if login == "ghost" else "alice"
    first = _report(1, reporter, 0, "Poetry ignores my certificate", BODY)
    again = refiled([first, _report(2, login, minutes, title, body)])
    assert (again == {2: frozenset({1})}) is counted


EMPTY_FORM = (
    "### Link\n\n_No response_\n\n### Description\n\n_No response_\n\n### Owner\n\n_No response_"
)
FILLED_FORM = EMPTY_FORM.replace("_No response_", "The preview fails to load.", 1)


@pytest.mark.parametrize(
    ("first_body", "title", "body", "counted"),
    [
        (EMPTY_FORM, "Dataset viewer issue for o/d", FILLED_FORM, True),  # an empty form, filled
        ("", "Dataset viewer issue for o/d", "The viewer shows a 500 error.", True),
        ("Dataset viewer issue for o/d", "Dataset viewer issue for o/d", FILLED_FORM, True),
        (FILLED_FORM, "dataset  viewer issue for O/D", EMPTY_FORM, True),  # the empty one second
        (EMPTY_FORM, "Dataset viewer issue for o/e", FILLED_FORM, False),  # another dataset
        # the same title over two bodies that each say something: two reports
        ("The preview times out.", "Dataset viewer issue for o/d", FILLED_FORM, False),
    ],
)
def test_the_same_title_over_a_body_that_said_nothing_is_filed_again(
    first_body, title, body, counted
):
    from issue_assistant.tracker.duplicates import filed_again

    first = _report(1, "alice", 0, "Dataset viewer issue for o/d", first_body)
    later = _report(2, "alice", 2, title, body)
    assert filed_again(first, later) is counted
    assert not filed_again(later, first)  # the later copy is never the first one's duplicate
    elsewhere = _report(2, "bob", 2, title, body)
    assert not filed_again(first, elsewhere)


def test_a_report_its_reporter_closed_before_filing_it_again_is_replaced_not_duplicated():
    """The reporter closed the first copy, then filed the report again (a better-formatted one,
    say): the second replaces the first, it is not its duplicate. Closed after the second was
    filed, the first still counts."""
    from issue_assistant.tracker.duplicates import filed_again

    first = _report(1, "alice", 0, "Poetry ignores my certificate", BODY)
    later = _report(2, "alice", 5, "Poetry ignores my certificate", BODY)
    assert filed_again(first, later)
    closed_first = first.model_copy(
        update={"state": "closed", "closed_at": first.created_at + timedelta(minutes=3)}
    )
    assert not filed_again(closed_first, later)
    closed_later = first.model_copy(
        update={"state": "closed", "closed_at": later.created_at + timedelta(minutes=3)}
    )
    assert filed_again(closed_later, later)


def test_a_pair_is_claimed_on_the_dataset_id_both_name(hf_snapshot, hf_index):
    """huggingface/datasets #4454 is #4453 filed again ("Dataset Viewer issue for
    Yaxin/SemEval2015": the first an empty form, the second with a line of description) by its
    reporter 98 seconds later: claimed at the shipped threshold as filed again. Without that,
    nothing but the dataset's id is in common, and it carries the claim, quoted (at a threshold a
    maintainer may set; the lexical score of an empty form stays below the prior's)."""
    shipped = analyzed(hf_snapshot, 4454, hf_index, Config())
    assert shipped.decision.duplicate is not None and shipped.decision.duplicate.number == 4453
    assert "the same reporter filed the same report" in shipped.decision.duplicate.reason
    result = analyzed(hf_snapshot, 4454, hf_index)
    alone = replace(_pair(result, 4453), refiled=False)
    assert alone.carried and alone.score() < load_prior().lexical.threshold
    cand = next(c for c in result.context.candidates if c.issue.number == 4453)
    assert reason(cand, alone) == "Same problem as #4453 (open): both name `Yaxin/SemEval2015`."


def test_a_dataset_requested_twice_is_claimed_on_the_page_both_link(hf_snapshot, hf_index):
    """huggingface/datasets #1772 "Adding SICK dataset" asks, a month later and by another
    reporter, for the dataset #1632 "SICK dataset" asked for (nobody marked it): both link the
    dataset's page, which the reason quotes whole, not its host."""
    result = analyzed(hf_snapshot, 1772, hf_index, Config())
    dup = result.decision.duplicate
    assert dup is not None and dup.number == 1632
    assert dup.reason == (
        "Same problem as #1632 (open): both link to `marcobaroni.org/composes/sick.html`."
    )


def test_a_report_filed_again_after_an_empty_form_is_claimed_whatever_its_score():
    """The rule apart from the score: a pair whose later issue is the earlier filed again is
    carried and claimed at 1, unless it is a follow-up of it."""
    again = PairFeatures(**BASE, title=0.2, prose=0.0, refiled=True)
    assert again.carried and again.claim() == 1.0 and again.score() < 0.1
    assert PairFeatures(**BASE, title=0.2, prose=0.0, refiled=True, follow_up=True).claim() == 0.0
