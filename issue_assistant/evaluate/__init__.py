"""Measure an engine against what maintainers actually did on closed issues (`evaluate`).

selection: which issues; gold: what people did after each was opened; runner: replay each issue
as it was; results: the JSONL of per-issue records; metrics: the measures; report: the Markdown.
"""
