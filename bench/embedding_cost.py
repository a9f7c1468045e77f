"""What sentence embeddings (`[index] embeddings = true`) cost and what they buy (issue 30).

    python bench/embedding_cost.py            # a Markdown section on stdout (a few minutes)
    python bench/embedding_cost.py --image    # and the image's Python layer built with and
                                              # without the extra (`bench/image_size.py`; pip)

Run by hand, not by `bench/run.py`. On the shared hf-datasets snapshot (7,258 records):

1. Size: the distributions the `embeddings` extra adds beyond the base install, as installed in
   this environment (each distribution's RECORD); with `--image`, as the image's build stage
   installs them (`bench/image_size.build`, once without and once with the extra).
2. Throughput: `embedding_text` of a fixed random sample of the snapshot's issues embedded one
   at a time, as the index does (pull requests are never embedded); the model's load in a fresh
   process; the real first `issue-assistant index` of the snapshot with and without embeddings.
3. A warm `analyze` of one issue with and without embeddings (fresh processes, the index and
   model in place). With embeddings the issue's stored vector is removed first, so each run
   loads onnxruntime and embeds the issue, as a live run does for a new issue.
4. What they buy: the type model's top label and proposal with and without the embedding
   block, on the labels section's settings (hf-datasets) and poetry-sample's, with the type
   prior held out (`bench/type_prior_measure.held_out`); vectors cached by
   `bench/section_label_model.vectors`.
"""

from __future__ import annotations

import random
import shutil
import statistics
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import commit  # noqa: E402
from bench.section_labels import DATA, LABELS, machine  # noqa: E402
from bench.section_startup import ISSUE, _time  # noqa: E402

DIST = "issue-assistant-action"
EXTRA = "embeddings"
SAMPLE = 300  # issues embedded for the throughput
REPEAT = 5  # warm analyze runs per case
COPIES_100K = 14  # bench/section_scale.py: 14 renumbered copies of the snapshot, 101,612 records


# ---- 1. size -------------------------------------------------------------------------------


def _closure(name: str, extras: set[str], seen: dict[str, set[str]]) -> None:
    """Every distribution `name[extras]` needs, installed here, into `seen`."""
    key = canonicalize_name(name)
    if key in seen and extras <= seen[key]:
        return
    seen.setdefault(key, set()).update(extras)
    for text in metadata.requires(name) or []:
        req = Requirement(text)
        envs = [{"extra": e} for e in extras | {""}]
        if req.marker is None or any(req.marker.evaluate(env) for env in envs):
            _closure(req.name, set(req.extras), seen)


def _installed_mb(name: str) -> float:
    dist = metadata.distribution(name)
    files = [f.locate() for f in dist.files or []]
    return sum(Path(f).stat().st_size for f in files if Path(f).is_file()) / 1e6


def added_here() -> list[tuple[float, str]]:
    """(MB, distribution) of what the extra adds beyond the base install, in this environment."""
    base: dict[str, set[str]] = {}
    full: dict[str, set[str]] = {}
    _closure(DIST, set(), base)
    _closure(DIST, {EXTRA}, full)
    return sorted(((_installed_mb(n), n) for n in set(full) - set(base)), reverse=True)


def image_rows() -> tuple[float, float, list[tuple[float, str]]]:
    """(site-packages MB without, with the extra, added distributions), as the build stage
    installs them (`bench/image_size.build`)."""
    from bench.image_size import build, shares, total_mb

    with tempfile.TemporaryDirectory(prefix="emb-base-") as a:
        site = build(Path(a))
        base_mb, base_names = total_mb(site), {canonicalize_name(n) for _, n in shares(site)}
    with tempfile.TemporaryDirectory(prefix="emb-with-") as b:
        site = build(Path(b), f"[{EXTRA}]")
        with_mb = total_mb(site)
        added = [(n / 1e6, d) for n, d in shares(site) if canonicalize_name(d) not in base_names]
    return base_mb, with_mb, added


# ---- 2. throughput and the first index -----------------------------------------------------


def throughput(snapshot) -> dict[str, float]:  # noqa: ANN001
    """Per-issue wall and CPU seconds of `embed_one` over a fixed sample of the issues."""
    from issue_assistant.index.duplicates import embedding_text
    from issue_assistant.index.embeddings import load_embedder

    issues = [i for i in snapshot.all_issues() if not i.is_pull_request]
    texts = [embedding_text(i) for i in random.Random(0).sample(issues, SAMPLE)]
    embedder = load_embedder()
    if embedder is None:
        raise SystemExit("bench embedding_cost: needs the embeddings extra (pip install '.[dev]')")
    embedder.embed_one(texts[0])
    wall, cpu = time.perf_counter(), time.process_time()
    for text in texts:
        embedder.embed_one(text)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {
        "wall": wall / len(texts),
        "cpu": cpu / len(texts),
        "chars": statistics.median(len(t) for t in texts),
    }


def load_cost(env: dict[str, str]) -> tuple[float, float]:
    """Median (wall, CPU) of loading the model in a fresh process, less the imports before it."""
    bare = "import numpy, issue_assistant.index.embeddings"
    load = bare + "; assert issue_assistant.index.embeddings.load_embedder()"
    out = []
    for code in (bare, load):
        walls, cpus = _time([sys.executable, "-c", code], 3, env)
        out.append((statistics.median(walls), statistics.median(cpus)))
    return out[1][0] - out[0][0], out[1][1] - out[0][1]


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "issue_assistant", *args]


def first_index(cache: Path, config: Path, env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU) of `issue-assistant index` of the snapshot into an empty `cache`, run where
    no labels.toml is found (the index alone, no label model fit)."""
    argv = _cli("index", "--snapshot", str(DATA), "--cache-dir", str(cache), "--config",
                str(config), "-q")  # fmt: skip
    walls, cpus = _time(argv, 1, env, cwd=cache.parent)
    return walls[0], cpus[0]


# ---- 3. warm analyze -----------------------------------------------------------------------


def _drop_vector(cache: Path, number: int) -> None:
    """Remove issue `number`'s stored vector: the next analysis embeds it, as for a new issue."""
    from issue_assistant.index.embeddings import DIM, MODEL_ID
    from issue_assistant.index.local import index_path
    from issue_assistant.index.vectors import VectorStore
    from issue_assistant.tracker.snapshot import read_repository

    folder = index_path(cache, read_repository(DATA).full_name) / "vectors"
    if VectorStore(folder, MODEL_ID, DIM).remove([number]) != 1:
        raise SystemExit(f"bench embedding_cost: no vector of #{number} in {folder}")


def warm_analyze(cache: Path, config: Path, env: dict[str, str]) -> list[float]:
    """Median wall and CPU of `analyze --issue ISSUE` (after one run that fits the model), and
    the wall range."""
    argv = _cli("analyze", "--snapshot", str(DATA), "--cache-dir", str(cache), "--issue",
                str(ISSUE), "--labels", str(LABELS), "--config", str(config), "-q")  # fmt: skip
    _time(argv, 1, env)
    walls, cpus = _time(argv, REPEAT, env)
    return [statistics.median(walls), statistics.median(cpus), min(walls), max(walls)]


# ---- 4. quality ----------------------------------------------------------------------------


def quality() -> list[str]:
    """Per snapshot and setting: the type model's scores without and with the embeddings."""
    from bench.fit_type_prior import DATA as SNAPSHOTS
    from bench.section_label_model import vectors
    from bench.section_labels import _f1
    from bench.type_prior_measure import held_out, proposed, type_probabilities
    from issue_assistant.learn.model import fit
    from issue_assistant.tracker.snapshot import read_snapshot

    cached: dict[str, dict] = {}
    out = []
    for name, labels, setting, train, test, gold, present, two in held_out():
        if name not in cached:
            cached[name] = vectors(read_snapshot(SNAPSHOTS[name][0]), name)
        vec = cached[name]
        cells = []
        for use in (None, vec.get):
            start = time.process_time()
            model = fit(train, labels, test[0].created_at, vectors=use)
            fit_s = time.process_time() - start
            gm = model.groups["type"]
            probs = type_probabilities(model, test, use)
            top = [max(p, key=p.get) if p else None for p in probs]
            at = proposed(gm, probs)
            cover = sum(a is not None for a in at) / len(at)
            block = "yes" if gm.dense is not None else "no"
            cells.append(
                (
                    _f1(gold, top, present),
                    _f1(gold, top, two),
                    _f1(gold, at, present),
                    _f1(gold, at, two),
                    cover,
                    fit_s,
                    block,
                )  # fmt: skip
            )
        (a1, a2, a3, a4, ac, af, _), (b1, b2, b3, b4, bc, bf, blk) = cells
        out.append(
            f"| {name} | {setting} ({len(train)} / {len(test)}) | {a1:.3f} -> {b1:.3f} | "
            f"{a2:.3f} -> {b2:.3f} | {a3:.3f} -> {b3:.3f} | {a4:.3f} -> {b4:.3f} | "
            f"{ac:.2f} -> {bc:.2f} | {af:.1f} -> {bf:.1f} s | {blk} |"
        )
    return out


# ---- the section ---------------------------------------------------------------------------


def main(image: bool) -> str:
    import os

    from issue_assistant import sync
    from issue_assistant.tracker.snapshot import read_snapshot

    snapshot = read_snapshot(DATA)
    records = list(snapshot.all_issues())
    issues = sum(not i.is_pull_request for i in records)
    lines = [
        f"Data: `hf-datasets` ({len(records):,} records, {issues:,} of them issues); commit "
        f"`{commit()}`; {machine()}; {time.strftime('%Y-%m-%d')}. Rerun: `python "
        "bench/embedding_cost.py` (by hand).",
        "",
        "Size: what the `embeddings` extra adds beyond the base install.",
        "",
    ]
    here = added_here()
    lines += ["| distribution | MB in this environment |", "| --- | --- |"]
    lines += [f"| {d} | {mb:.1f} |" for mb, d in here]
    lines.append(f"| **in all** | **{sum(mb for mb, _ in here):.1f}** |")
    if image:
        from bench.image_size import BASE_MB

        base_mb, with_mb, added = image_rows()
        lines += [
            "",
            "As the image's build stage installs them (`bench/image_size.build`): site-packages "
            f"{base_mb:.1f} MB without the extra, {with_mb:.1f} MB with it "
            f"(+{with_mb - base_mb:.1f} MB); the image about {base_mb + BASE_MB:.0f} MB -> "
            f"{with_mb + BASE_MB:.0f} MB. "
            "Added: " + ", ".join(f"{d} {mb:.1f}" for mb, d in added) + ".",
        ]
    skip = ("ISSUE_ASSISTANT_", "PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")
    env = {k: v for k, v in os.environ.items() if not k.startswith(skip)}
    with tempfile.TemporaryDirectory(prefix="emb-cost-") as tmp:
        env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        configs = {}
        for on in (False, True):
            configs[on] = Path(tmp) / f"config-{on}.toml"
            configs[on].write_text(f"[index]\nembeddings = {str(on).lower()}\n")
        _time([sys.executable, "-m", "issue_assistant", "--help"], 1, env)  # bytecode first
        tp = throughput(snapshot)
        load_wall, load_cpu = load_cost(env)
        builds = {
            on: first_index(Path(tmp) / f"cache-{on}", configs[on], env) for on in (False, True)
        }
        on, off = Path(tmp) / "cache-True", Path(tmp) / "cache-False"
        warm = {"off": warm_analyze(off, configs[False], env)}
        warm["stored"] = warm_analyze(on, configs[True], env)
        _drop_vector(on, ISSUE)
        warm["new"] = warm_analyze(on, configs[True], env)
        shutil.rmtree(Path(tmp) / "pycache", ignore_errors=True)
    per = tp["cpu"]
    at_100k = issues * COPIES_100K
    budget = sync.EMBED_BUDGET_S
    extra = builds[True][1] - builds[False][1]
    lines += [
        "",
        f"Throughput: {SAMPLE} issues drawn at random (seed 0) among the {issues:,}, their "
        f"`embedding_text` (median {tp['chars']:.0f} characters) embedded one at a time as the "
        f"index does: {tp['wall'] * 1000:.1f} ms wall, {per * 1000:.1f} ms CPU per issue "
        f"({1 / tp['wall']:.0f} issues per second, one thread). Loading the model in a fresh "
        f"process (onnxruntime, the session, the tokenizer): {load_wall:.2f} s wall, "
        f"{load_cpu:.2f} s CPU. Pull requests are never embedded (`VectorStore.missing`).",
        "",
        "| first index of the snapshot | wall | CPU |",
        "| --- | --- | --- |",
    ]
    for on in (False, True):
        wall, cpu = builds[on]
        lines.append(f"| `issue-assistant index`, embeddings {'on' if on else 'off'} (measured) "
                     f"| {wall:.1f} s | {cpu:.1f} s |")  # fmt: skip
    lines += [
        f"| the embeddings' share at {len(records):,} records (measured: on - off) | "
        f"{builds[True][0] - builds[False][0]:.1f} s | {extra:.1f} s |",
        f"| the embeddings' share at {len(records) * COPIES_100K:,} records ({at_100k:,} issues, "
        f"extrapolated: {per * 1000:.1f} ms CPU per issue) | – | {at_100k * per:.0f} s |",
        "",
        f"A live run embeds at most {budget:.0f} s of missing issues (`sync.EMBED_BUDGET_S`): at "
        f"about {at_100k:,} issues the first build's vectors take about "
        f"{max(1, round(at_100k * per / budget))} runs; the model has its embedding block only "
        "once every training issue has a vector.",
        "",
        f"Warm `analyze` of #{ISSUE} (a fresh process each time, index and model in place; "
        f"median of {REPEAT}, wall range):",
        "",
        "| embeddings | wall | CPU | wall min-max |",
        "| --- | --- | --- | --- |",
    ]
    names = {
        "off": "off",
        "stored": "on, the issue's vector already stored (the dense search, the model's block)",
        "new": "on, the issue embedded in the run, as a new one (and onnxruntime loaded)",
    }
    for key, what in names.items():
        wall, cpu, lo, hi = warm[key]
        lines.append(f"| {what} | {wall:.2f} s | {cpu:.2f} s | {lo:.2f}-{hi:.2f} s |")
    wall, cpu = warm["new"][0] - warm["off"][0], warm["new"][1] - warm["off"][1]
    lines.append(f"| **the difference, new issue** | **{wall:+.2f} s** | **{cpu:+.2f} s** | |")
    lines += [
        "",
        "What they buy: the type model without -> with the embedding block (type prior held "
        "out; rows: training / scored issues). Macro F1 over the types present and over "
        "bug/enhancement (kind/bug, kind/feature on poetry-sample); proposed: an abstention is "
        "a miss. Fit: CPU seconds of the fit with its out-of-fold tables.",
        "",
        "| snapshot | setting | top label, all | top label, two | proposed, all | "
        "proposed, two | coverage | fit | block fit |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        *quality(),
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="What the embeddings extra costs and buys.")
    parser.add_argument(
        "--image", action="store_true", help="also build the image's Python layer twice (pip)"
    )
    print(main(parser.parse_args().image))
