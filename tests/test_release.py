"""The published Action: a pinned, locked image pulled from ghcr.io at the package's version, a
release workflow that builds it, CI that runs .ci/run, and the workflow `init` writes."""

from __future__ import annotations

import os
import re
import subprocess
import tomllib
from pathlib import Path

import yaml

from issue_assistant import __version__

ROOT = Path(__file__).resolve().parents[1]


def _requirement_name(spec: str) -> str:
    return re.split(r"[<>=!~\[; ]", spec, maxsplit=1)[0].lower().replace("_", "-")


def _release() -> dict:
    return yaml.safe_load((ROOT / ".github/workflows/release.yml").read_text())


def _step(job: dict, name: str) -> dict:
    return next(s for s in job["steps"] if s.get("name") == name)


def test_the_branch_builds_and_the_release_commit_pulls_the_image_of_its_tag(tmp_path):
    action = (ROOT / "action.yml").read_text(encoding="utf-8")
    assert yaml.safe_load(action)["runs"] == {"using": "docker", "image": "Dockerfile"}
    release = _release()
    pin = release["jobs"]["pin"]
    assert pin["needs"] == "image" and pin["permissions"] == {"contents": "write"}
    # Run the release's own pinning step on a copy, as the runner would for a tag of a fork.
    (tmp_path / "action.yml").write_text(action, encoding="utf-8")
    env = {"PATH": os.environ["PATH"], "GITHUB_REPOSITORY": "Some-Fork/Triage.Bot"}
    env["GITHUB_REF_NAME"] = f"v{__version__}"
    script = _step(pin, "Pin the image in action.yml")["run"]
    subprocess.run(["bash", "-e", "-c", script], cwd=tmp_path, env=env, check=True)
    pinned = yaml.safe_load((tmp_path / "action.yml").read_text(encoding="utf-8"))
    image = f"docker://ghcr.io/some-fork/triage.bot:v{__version__}"
    assert pinned == {**yaml.safe_load(action), "runs": {"using": "docker", "image": image}}
    # ... the very image the build job pushed for that tag.
    build = release["jobs"]["image"]
    assert (
        "ghcr.io/${GITHUB_REPOSITORY,,}"
        in _step(build, "Check the tag and the package version agree")["run"]
    )
    assert (
        "type=raw,value=v${{ steps.version.outputs.version }}"
        in _step(build, "Tags")["with"]["tags"]
    )
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["version"] == __version__


def test_dockerfile_pins_the_base_and_installs_the_lock():
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    froms = re.findall(r"^FROM (\S+)", text, re.MULTILINE)
    external = [f for f in froms if ":" in f]
    assert external and all(re.search(r"@sha256:[0-9a-f]{64}$", f) for f in external), froms
    assert '--constraint requirements.lock ".${EXTRAS}"' in text and "[dev]" not in text
    assert text.rstrip().endswith('ENTRYPOINT ["python", "-u", "-m", "issue_assistant.action"]')
    for tool in ("@anthropic-ai/claude-code", "@google/gemini-cli", "@github/copilot"):
        assert tool in text  # the CLI engines' variant (ENGINE_TOOLS=cli)
    ignore = (ROOT / ".dockerignore").read_text(encoding="utf-8").split()
    assert {"!pyproject.toml", "!README.md", "!requirements.lock", "!issue_assistant/"} <= set(
        ignore
    )


def test_the_lock_pins_every_runtime_dependency():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    locked = {}
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            assert version, f"requirements.lock: {line!r} is not pinned with =="
            locked[_requirement_name(name)] = version
    missing = {_requirement_name(d) for d in project["dependencies"]} - set(locked)
    assert not missing, f"regenerate requirements.lock (docs/github-action.md): {missing}"


def test_release_builds_both_images_and_ci_runs_the_ci_script():
    release = _release()
    assert release[True]["push"]["tags"] == ["v*.*.*"]  # YAML 1.1 reads `on` as true
    job = release["jobs"]["image"]
    variants = [m["engine_tools"] for m in job["strategy"]["matrix"]["include"]]
    assert variants == ["none", "cli"]  # the Dockerfile's ENGINE_TOOLS build argument
    build = next(s for s in job["steps"] if s.get("name") == "Build and push")
    assert "ENGINE_TOOLS=${{ matrix.engine_tools }}" in build["with"]["build-args"]
    assert release["permissions"] == {"contents": "read", "packages": "write"}
    ci = yaml.safe_load((ROOT / ".github/workflows/ci.yml").read_text())
    assert any(step.get("run") == ".ci/run" for step in ci["jobs"]["test"]["steps"])


def test_init_writes_the_example_workflow_as_documented():
    packaged = ROOT / "issue_assistant/templates/init/workflow.yml"
    assert packaged.read_text() == (ROOT / "docs/workflow.yml").read_text(), (
        "copy docs/workflow.yml to issue_assistant/templates/init/workflow.yml"
    )


def _stages(text: str) -> dict[str, str]:
    """The Dockerfile's stages by name (`FROM ... AS name`), each with its instructions."""
    stages: dict[str, str] = {}
    name = ""
    for line in text.splitlines():
        match = re.match(r"FROM \S+(?: AS (\S+))?", line)
        if match:
            name = match.group(1) or "final"
            stages[name] = ""
        elif name:
            stages[name] += line + "\n"
    return stages


def test_dockerfile_installs_and_trims_in_the_build_stage_only():
    stages = _stages((ROOT / "Dockerfile").read_text(encoding="utf-8"))
    build = stages["build"]
    assert "pip install --ignore-installed --no-compile --prefix /install" in build
    # Test suites out, debug symbols stripped, except the bundled libraries strip would break.
    assert "-type d -name tests -prune -exec rm -rf" in build
    assert "strip --strip-debug" in build and "! -path '*.libs/*'" in build
    # Compiled for the paths the files end up at, valid whatever their mtime after the copy.
    assert "--invalidation-mode unchecked-hash" in build and '-d "$SITE"' in build
    assert "COPY --from=build /install /usr/local" in stages["base"]
    for name, body in stages.items():
        if name != "build":
            assert "pip install" not in body and "apt-get" not in body, name
