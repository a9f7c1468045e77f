"""Replay each selected issue as it was one minute after opening, and record what came out."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import replace
from datetime import datetime, timedelta

from issue_assistant.config.labels import LabelsConfig
from issue_assistant.config.sections import Config, Strategy
from issue_assistant.decision import Decision
from issue_assistant.engines import Engine
from issue_assistant.engines.failures import kind_of
from issue_assistant.errors import EngineError, UserError
from issue_assistant.evaluate.clone import CloneHistory
from issue_assistant.evaluate.files import fixed_files, path_areas
from issue_assistant.evaluate.gold import gold_for, is_sure_original
from issue_assistant.evaluate.results import IssueResult
from issue_assistant.index import IssueIndex
from issue_assistant.learn.duplicate_model import BucketDuplicates, Replayed
from issue_assistant.learn.learned import Buckets
from issue_assistant.learn.store import BucketSource
from issue_assistant.likely.code import code_index_for
from issue_assistant.likely.fix_history import FixHistory
from issue_assistant.moment import Moment
from issue_assistant.pipeline import analyze, engines_for, replay_pairs
from issue_assistant.progress import Progress
from issue_assistant.tracker.asof import ONE_MINUTE, AsOfView
from issue_assistant.tracker.base import Tracker
from issue_assistant.tracker.duplicates import refiled
from issue_assistant.tracker.models import Issue

log = logging.getLogger(__name__)


class Evaluator:
    """Runs the engine on one issue at a time (thread-safe: one engine pair per thread)."""

    def __init__(
        self,
        tracker: Tracker,
        *,
        index: IssueIndex,
        labels: LabelsConfig,
        config: Config,
        engine_name: str | None = None,
        cutoffs: list[datetime] | None = None,
        strategy: Strategy | None = None,
        clone: CloneHistory | None = None,
        again: Mapping[int, frozenset[int]] | None = None,
    ) -> None:
        self.tracker = tracker
        # the reports their reporters filed again: duplicates in the gold, as in the benchmarks
        # (`again`: already found over this tracker, by the selection)
        self.again = refiled(tracker.all_issues()) if again is None else again
        # With a clone's history: each issue's code as it was, and the fixes its merges show.
        self.clone = clone
        # The `similar` engine's label models: one per cutoff, fit only on issues created before
        # it (never the artifact beside the index, which has seen later issues).
        self.label_fits = BucketSource(tracker, labels, cutoffs or [])
        # and its duplicate weights and threshold, fit per cutoff on what was known then
        self.duplicate_fits = BucketDuplicates(
            tracker, index, labels, config, cutoffs or [], self._replay_pairs, self.again
        )
        # The repository as the run knows it: the indexes built once (the discussions; the code
        # `[code] checkout` names and the fixes, unless a clone gives each issue's own), each
        # issue's moment a view of it.
        code = code_index_for(config, tracker.repository.full_name) if clone is None else None
        fixes = FixHistory.known(tracker) if code is not None else None
        learned = Buckets(self.label_fits, self.duplicate_fits)
        self.base = Moment.build(tracker, index, labels, learned, code=code, fixes=fixes)
        self.index = index
        self.labels = labels
        self.config = config
        self.engine_name = engine_name
        self.strategy = strategy
        self.bot_login = config.approval.bot_login
        self._local = threading.local()
        self.engine, _ = self.engines()  # fail early on an unknown engine

    def start(self, issues: Sequence[Issue]) -> None:
        """With an engine that uses them (`similar`), fit the label models and the duplicate
        weights of every bucket `issues` fall in, in two threads of their own and in the order
        the issues will ask for them, beside the analysis of the issues already answerable."""
        if self.engine.learns:
            moments = [i.created_at for i in issues]
            self.label_fits.start(self.index, moments)
            self.duplicate_fits.fit_ahead(moments)

    def _replay_pairs(self, issue: Issue) -> Replayed:
        return replay_pairs(self.base, issue, config=self.config, again=self.again)

    def engines(self) -> tuple[Engine, Engine | None]:
        pair = getattr(self._local, "engines", None)
        if pair is None:
            pair = engines_for(self.config, self.labels, self.engine_name, self.strategy)
            self._local.engines = pair
        return pair

    def one(self, issue: Issue, position: int = 0, after: timedelta = ONE_MINUTE) -> IssueResult:
        """Analyze `issue` as it was one minute (or `after`) after opening; never raises for an
        engine's sake."""
        view = AsOfView.for_issue(self.tracker, issue.number, after=after)
        target = view.target()  # with unknown history it carries no labels
        gold = gold_for(self.tracker, issue, view.moment, self.labels, self.bot_login, self.again)
        engine, fallback = self.engines()
        answered, error = True, None
        likely: list[str] = []
        functions: list[str] = []
        moment = self.base.at(view, view.moment)
        fixed, fixed_functions = fixed_files(issue), None
        if self.clone is not None:
            # the code strictly before it was opened, and the fixes the clone's merges show
            code = self.clone.code_at(issue.created_at)
            moment = replace(moment, code=code, fixes=self.clone.history)
            if fixed is None:
                fixed, fixed_functions = self.clone.truth(issue)
        start = time.perf_counter()
        try:
            analysis = analyze(moment, target, config=self.config, engine=engine, fallback=fallback)
            decision, error = analysis.decision, analysis.error
            ranked = analysis.context.ranked_files
            likely = [f.path for f in ranked]
            functions = [f"{f.path}::{f.function}" for f in ranked if f.function]
        except EngineError as exc:
            decision, answered = self._empty(engine, start, kind_of(exc)), False
            error = f"{engine.name} ({kind_of(exc)}): {exc}"
        except UserError:
            raise  # a setup failure fails every issue: stop the run
        except Exception as exc:  # noqa: BLE001 - a long run goes on; the failure is counted
            log.warning("#%d: %s failed: %r", issue.number, engine.name, exc)
            decision, answered = self._empty(engine, start), False
            error = f"{engine.name}: {type(exc).__name__}: {exc}"
        dup = decision.duplicate
        proposed_sure = dup is not None and is_sure_original(
            self.tracker, dup.number, view.moment, self.bot_login
        )
        return IssueResult(
            number=issue.number,
            title=issue.title,
            created_at=issue.created_at,
            position=position,
            decision=decision,
            gold=gold,
            proposed_sure=proposed_sure,
            error=error,
            answered=answered,
            likely_files=likely,
            likely_functions=functions,
            fixed_files=fixed,
            fixed_functions=fixed_functions,
            path_areas=path_areas(self.labels, likely),
        )

    @staticmethod
    def _empty(engine: Engine, start: float, failure: str = "unknown") -> Decision:
        d = Decision(engine=engine.name, model=engine.model, strategy=engine.strategy)
        usage = d.usage.model_copy(
            update={"latency_s": time.perf_counter() - start, "failure": failure}
        )
        return d.model_copy(update={"usage": usage})


def run_all(
    evaluator: Evaluator,
    items: list[tuple[int, Issue]],
    *,
    jobs: int = 1,
    on_result: Callable[[IssueResult], None],
    progress: Progress | None = None,
    done: int = 0,
) -> list[IssueResult]:
    """Evaluate `items` with `jobs` threads; each result goes to `on_result` as it arrives."""
    progress = progress or Progress("evaluate")
    if items:
        evaluator.start([issue for _, issue in items])
    progress.start(done + len(items), done)
    out: list[IssueResult] = []
    cost = 0.0

    def finish(result: IssueResult) -> None:
        nonlocal cost
        on_result(result)
        out.append(result)
        cost += result.decision.usage.cost_usd
        error = f" ({result.error})" if result.error else ""
        progress.advance(note=f"#{result.number}{error} cost ${cost:.2f}")

    try:
        if jobs <= 1:
            for position, issue in items:
                finish(evaluator.one(issue, position))
            return out
        pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="evaluate")
        try:
            pending: set[Future[IssueResult]] = set()
            queue = list(items)
            while queue or pending:
                while queue and len(pending) < jobs * 2:
                    position, issue = queue.pop(0)
                    pending.add(pool.submit(evaluator.one, issue, position))
                completed, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in completed:
                    finish(future.result())
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        return out
    finally:
        progress.stop()
