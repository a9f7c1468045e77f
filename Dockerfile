# syntax=docker/dockerfile:1
# The issue-assistant GitHub Action (a Docker container action; see action.yml). The release
# workflow (.github/workflows/release.yml) builds it and pushes it to ghcr.io; action.yml pulls it.
#
# Reproducible: the base images are pinned by digest, and the runtime dependencies by
# requirements.lock (regenerate it after changing `dependencies` in pyproject.toml; the command is
# in docs/github-action.md).
#
# The default image has only Python and the package. To add the command-line engines' tools
# (Claude Code, Gemini CLI, GitHub Copilot CLI, on Node.js 22), build it yourself with
#   docker build --build-arg ENGINE_TOOLS=cli -t issue-assistant:cli .
# and point `runs.image` at that image (a Dockerfile action cannot pass build arguments).
ARG ENGINE_TOOLS=none

# TODO(verify digest): these digests were not pulled here (no registry access when written); they
# are the ones public Dockerfiles pin for these tags. A wrong digest fails the build loudly.
# Check with `docker buildx imagetools inspect python:3.11.11-slim-bookworm` and update.
FROM node:22.12.0-bookworm-slim@sha256:35531c52ce27b6575d69755c73e65d4468dba93a25644eed56dc12879cae9213 AS node

FROM python:3.11.11-slim-bookworm@sha256:081075da77b2b55c23c088251026fb69a7b2bf92471e491ff5fd75c192fd38e5 AS base
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /opt/issue-assistant
COPY pyproject.toml README.md requirements.lock ./
COPY issue_assistant ./issue_assistant
# The package and its runtime dependencies only, at the locked versions: no dev or local-model
# extras. (pip byte-compiles them here, so a run does not compile on every start.)
# EXTRAS: optional extras for a larger variant, e.g. --build-arg EXTRAS='[mcp]' (none by default).
ARG EXTRAS=""
RUN pip install --no-cache-dir --constraint requirements.lock ".${EXTRAS}" \
    && cd / && rm -rf /opt/issue-assistant

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
