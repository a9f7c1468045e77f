# syntax=docker/dockerfile:1
# The issue-assistant GitHub Action (a Docker container action; see action.yml). The release
# workflow (.github/workflows/release.yml) builds it and pushes it to ghcr.io; action.yml pulls it.
#
# Reproducible: the base images are pinned by digest, and the runtime dependencies by
# requirements.lock with their hashes (regenerate it with `scripts/lock` after changing
# `dependencies` in pyproject.toml).
#
# The default image has only Python and the package. To add the command-line engines' tools
# (Claude Code, Gemini CLI, GitHub Copilot CLI, on Node.js 22), build it yourself with
#   docker build --build-arg ENGINE_TOOLS=cli -t issue-assistant:cli .
# and point `runs.image` at that image (a Dockerfile action cannot pass build arguments).
ARG ENGINE_TOOLS=none

# The digests could not be checked against the registry from where this was written (no route to
# registry-1.docker.io, 2026-12-01); each is the one several unrelated public Dockerfiles pin for
# its tag. A tag is re-pushed when Debian updates, so a digest names one build: a wrong or removed
# one fails the build loudly. Refresh: `docker buildx imagetools inspect IMAGE:TAG` (the digest
# of the index, multi-platform).
FROM node:22.12.0-bookworm-slim@sha256:35531c52ce27b6575d69755c73e65d4468dba93a25644eed56dc12879cae9213 AS node

FROM python:3.11.11-slim-bookworm@sha256:081075da77b2b55c23c088251026fb69a7b2bf92471e491ff5fd75c192fd38e5 AS slim

# Build stage: install into /install, trim, byte-compile; the image copies the result only, so
# nothing removed here ever reaches a layer.
FROM slim AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
RUN apt-get update \
    && apt-get install --yes --no-install-recommends binutils \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY pyproject.toml README.md requirements.lock ./
COPY issue_assistant ./issue_assistant
# The runtime dependencies exactly as locked, each file checked against its hash
# (requirements.lock, from `scripts/lock`), then the package itself; `pip check` fails the build
# when the lock no longer satisfies pyproject.toml. No dev or local-model extras. EXTRAS:
# optional extras for a larger variant, e.g. --build-arg EXTRAS='[mcp]': their own packages are
# not in the lock, and are installed beside the locked ones without hash checks, the lock's
# versions (its hashes left out: a constraint with a hash asks one of `.` too) constraining
# those it holds, so no locked package gets a second version.
ARG EXTRAS=""
ARG SITE=/usr/local/lib/python3.11/site-packages
RUN pip install --ignore-installed --no-compile --prefix /install \
        --require-hashes --no-deps --requirement requirements.lock \
    && pip install --ignore-installed --no-compile --prefix /install --no-deps . \
    && export PYTHONPATH=/install/lib/python3.11/site-packages \
    && if [ -n "$EXTRAS" ]; then sed -e '/--hash=/d' -e 's/ *\\$//' requirements.lock > /tmp/locked.txt \
        && pip install --no-compile --prefix /install --constraint /tmp/locked.txt ".${EXTRAS}"; fi \
    && pip check
# Trim (docs/github-action.md, "What goes in the image"): the libraries' own test suites, what
# only builds or type-checks against numpy (f2py, distutils, C headers, `.pyi` stubs), Pygments
# (rich imports it only for syntax highlighting and tracebacks, which the assistant never shows;
# tests/test_image.py checks), and the symbols the extension modules do not export. The
# libraries auditwheel bundled (`*.libs/`) are left alone: strip breaks their patched ELF headers.
# Then byte-compile (bench/image_size.byte_compile does the same): the libraries in place of
# their sources (a traceback through them names the file and line, without the line's text),
# the package beside its own sources.
RUN find /install -type d -name tests -prune -exec rm -rf {} + \
    && rm -rf "/install/lib/python3.11/site-packages/numpy/f2py" \
        "/install/lib/python3.11/site-packages/numpy/distutils" \
        "/install/lib/python3.11/site-packages/numpy/_core/include" \
        "/install/lib/python3.11/site-packages/pygments" \
        /install/bin/f2py /install/bin/numpy-config /install/bin/pygmentize \
    && find /install -type f -name '*.pyi' -delete \
    && find /install -type f -name '*.so*' ! -path '*.libs/*' -exec strip --strip-unneeded {} + \
    && python -m compileall -q -j 0 --invalidation-mode unchecked-hash -b -x /issue_assistant/ \
        -d "$SITE" /install/lib/python3.11/site-packages \
    && find /install/lib/python3.11/site-packages -name '*.py' ! -path '*/issue_assistant/*' -delete \
    && python -m compileall -q -j 0 --invalidation-mode unchecked-hash \
        -d "$SITE/issue_assistant" /install/lib/python3.11/site-packages/issue_assistant

FROM slim AS base
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PYDANTIC_DISABLE_PLUGINS=__all__ \
    OPENBLAS_NUM_THREADS=1
# Byte-compiled in the build stage (against the final paths, checked by hash rather than mtime),
# so a run does not compile the package and its libraries on every start.
COPY --from=build /install /usr/local
RUN issue-assistant --version

FROM base AS tools-none

FROM base AS tools-cli
ARG CLAUDE_CODE_VERSION=2.1.328
ARG GEMINI_CLI_VERSION=0.61.0
ARG COPILOT_CLI_VERSION=1.0.102
COPY --from=node /usr/local/bin/node /usr/local/bin/node
COPY --from=node /usr/local/lib/node_modules /usr/local/lib/node_modules
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
    && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
    && npm install --global --omit=dev \
        "@anthropic-ai/claude-code@${CLAUDE_CODE_VERSION}" \
        "@google/gemini-cli@${GEMINI_CLI_VERSION}" \
        "@github/copilot@${COPILOT_CLI_VERSION}" \
    && npm cache clean --force

FROM tools-${ENGINE_TOOLS}
ENTRYPOINT ["python", "-u", "-m", "issue_assistant.action"]
