"""The action from source (`source/action.yml`): what runs before the first release publishes an
image (and in a fork). Its inputs and outputs are the published action's; each input reaches the
entrypoint under the name the settings read; run as its step runs it, it triages."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

from issue_assistant.settings import Settings
from tests.fakegithub import FakeGitHub
from tests.fakegithub.fixtures import TOKEN
from tests.test_action import REPO, environment, event, outputs, seed

ROOT = Path(__file__).resolve().parents[1]
PUBLISHED = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
SOURCE = yaml.safe_load((ROOT / "source" / "action.yml").read_text(encoding="utf-8"))
STEPS = SOURCE["runs"]["steps"]
RUN = next(s for s in STEPS if s.get("id") == "run")


def test_the_same_inputs_and_outputs_as_the_published_action():
    assert SOURCE["runs"]["using"] == "composite" and PUBLISHED["runs"]["using"] == "docker"
    assert SOURCE["inputs"] == PUBLISHED["inputs"]
    assert {k: v["description"] for k, v in SOURCE["outputs"].items()} == {
        k: v["description"] for k, v in PUBLISHED["outputs"].items()
    }
    for name, spec in SOURCE["outputs"].items():
        assert spec["value"] == f"${{{{ steps.run.outputs.{name} }}}}"


def test_every_input_reaches_the_entrypoint_under_a_name_the_settings_read():
    aliases = {
        str(a)
        for field in Settings.model_fields.values()
        if field.validation_alias is not None
        for a in getattr(field.validation_alias, "choices", [field.validation_alias])
    }
    env = RUN["env"]
    assert set(env.values()) == {f"${{{{ inputs.{name} }}}}" for name in PUBLISHED["inputs"]}
    for variable in env:
        assert variable in aliases, variable
    assert RUN["run"] == "python -u -m issue_assistant.action"
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    assert 'ENTRYPOINT ["python", "-u", "-m", "issue_assistant.action"]' in dockerfile


def test_it_installs_the_locked_dependencies_and_this_checkout():
    setup = STEPS[0]["uses"]
    assert re.fullmatch(r"actions/setup-python@[0-9a-f]{40}", setup)
    assert STEPS[0]["with"]["python-version"] == "3.11"  # the lock's Python
    install = next(s["run"] for s in STEPS if "pip install" in s.get("run", ""))
    assert "--require-hashes" in install and '"$GITHUB_ACTION_PATH/../requirements.lock"' in install
    assert '--no-deps "$GITHUB_ACTION_PATH/.."' in install


def test_run_as_its_step_runs_it_the_action_triages(tmp_path, fake_engine):
    """The step's command in a process of its own, with the step's environment filled in from
    the inputs a workflow gives (the others at their defaults), against the fake GitHub."""
    with FakeGitHub(REPO, token=TOKEN) as server:
        seed(server)
        given = {"github-token": TOKEN, "writes": "live", "engine": "similar"}
        inputs = {k: str(v.get("default", "")) for k, v in SOURCE["inputs"].items()} | given
        base = environment(
            tmp_path, "analyze", "issues", event(tmp_path, "issues/opened.payload.json")
        )
        step = {
            var: re.sub(r"\$\{\{ inputs\.([\w-]+) \}\}", lambda m: inputs[m[1]], value)
            for var, value in RUN["env"].items()
        }
        step["INPUT_LABELS"], step["INPUT_CONFIG"] = base["INPUT_LABELS"], base["INPUT_CONFIG"]
        env = {k: v for k, v in os.environ.items() if not k.startswith(("INPUT_", "GITHUB_"))}
        env |= {k: v for k, v in base.items() if not k.startswith("INPUT_")} | step
        env |= {"GITHUB_API_URL": server.base_url, "PYTHONPATH": str(ROOT)}
        done = subprocess.run(
            [sys.executable, *RUN["run"].split()[1:]],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr[-2000:]
    # it read the issue with the token given, and said why no comment
    assert any(r.path == f"/repos/{REPO}/issues/3" and r.status == 200 for r in server.requests)
    assert outputs(tmp_path)["skipped"] == "true"
    assert "nothing to propose" in (tmp_path / "summary.md").read_text(encoding="utf-8")


def test_init_says_which_reference_runs_today(tmp_path, monkeypatch, capsys):
    """What init prints and the workflow it writes name the published action and, for before
    the first release, the action from source, which is a real file of this repository."""
    from issue_assistant.cli import main
    from issue_assistant.published import published

    monkeypatch.chdir(tmp_path)
    snapshot = ROOT.parent / "shared" / "data" / "poetry-sample.jsonl.gz"
    assert main(["init", "--snapshot", str(snapshot), "--dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    ref = published()
    assert ref.source == f"{ref.repository}/source@main"
    assert (
        f"The workflow uses {ref.action}, whose image the first release publishes; until that "
        f"release exists, use {ref.source} instead (the action from source)."
    ) in out
    workflow = (tmp_path / ".github" / "workflows" / "issue-assistant.yml").read_text()
    assert f"#   uses: {ref.source}\n" in workflow and f"uses: {ref.action}  #" in workflow
    assert (ROOT / ref.source.split("/", 2)[2].split("@")[0] / "action.yml").is_file()
