"""Shared fixtures: the shared data sets (by relative path), their indexes, the fake engine."""

from __future__ import annotations

import os
from pathlib import Path

# A worker of the parallel suite (pytest-xdist, one per core) computes on one thread: numpy's
# OpenBLAS (and any OpenMP pool) sized for every core would have each worker's threads wait
# for the other worker's. Set before anything imports numpy.
if os.environ.get("PYTEST_XDIST_WORKER"):
    for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_name, "1")

import pytest
from hypothesis import HealthCheck, Phase, settings

from issue_assistant.config.labels import load_labels
from issue_assistant.config.sections import load_config
from issue_assistant.engines.fake import FakeEngine
from issue_assistant.index.local import open_index
from issue_assistant.tracker.snapshot import read_snapshot
from tests.fakegithub.fixtures import fake_github, github_tracker  # noqa: F401
from tests.reused_fits import reused_fits  # noqa: F401

# Property tests: `ci` (the default) keeps the whole property suite well under a minute and the
# same on every run; `HYPOTHESIS_PROFILE=thorough` explores far more cases.
_SLOW_OK = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example]
settings.register_profile(
    "ci",
    max_examples=40,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=_SLOW_OK,
    # No shrinking: a failure is reported as found (the pipeline makes shrinking take minutes).
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
)
settings.register_profile(
    "thorough", max_examples=1000, deadline=None, suppress_health_check=_SLOW_OK
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
HF = DATA / "hf-datasets.jsonl.gz"
POETRY = DATA / "poetry-sample.jsonl.gz"
WEBHOOKS = DATA / "webhooks"


@pytest.fixture(scope="session")
def hf_snapshot():
    return read_snapshot(HF)


@pytest.fixture(scope="session")
def poetry_snapshot():
    return read_snapshot(POETRY)


@pytest.fixture(scope="session")
def hf_index(hf_snapshot, tmp_path_factory):
    return open_index(hf_snapshot, tmp_path_factory.mktemp("hf-cache"))


@pytest.fixture(scope="session")
def hf_words(hf_snapshot, tmp_path_factory):
    """hf-datasets' index with the shipped word vectors beside BM25, as the engine's default."""
    return open_index(hf_snapshot, tmp_path_factory.mktemp("hf-words"), vectors="words")


@pytest.fixture(scope="session")
def poetry_index(poetry_snapshot, tmp_path_factory):
    return open_index(poetry_snapshot, tmp_path_factory.mktemp("poetry-cache"))


@pytest.fixture(scope="session")
def hf_labels():
    return load_labels(ROOT / "bench" / "hf-datasets.labels.toml")


@pytest.fixture(scope="session")
def project_labels():
    return load_labels(ROOT / "labels.toml")


@pytest.fixture(scope="session")
def project_config():
    return load_config(ROOT / "config.toml")


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """`-n auto` (pyproject's addopts): one worker per core for the suite or a folder, but one
    process for the tests of one file, where starting workers costs more than it gains."""
    here = Path(config.invocation_params.dir)
    files = {arg.split("::")[0] for arg in config.args}
    if len(files) == 1 and (here / next(iter(files))).is_file():
        return 0
    return None  # pytest-xdist's own count


@pytest.fixture(scope="session", autouse=True)
def user_cache(tmp_path_factory):
    """The platform's user cache folder (where a command without --cache-dir keeps its index),
    one per test process: the suite's parallel workers never build one index at once, and no
    run reads what an earlier one (or a developer's own use) left in ~/.cache."""
    folder = tmp_path_factory.mktemp("user-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_CACHE_HOME", str(folder))
        yield folder


@pytest.fixture(autouse=True)
def fake_engine():
    """The scriptable engine, empty before and after every test."""
    FakeEngine.reset()
    yield FakeEngine
    FakeEngine.reset()


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch):  # noqa: ANN201
    """The fake Anthropic API (tests/fakeanthropic.py), where the anthropic engine sends."""
    from tests.fakeanthropic import FakeAnthropic

    with FakeAnthropic() as fake:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        monkeypatch.setenv("ISSUE_ASSISTANT_MAX_RETRIES", "1")
        yield fake
