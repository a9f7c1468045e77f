"""`init`: draft a repository's configuration from its labels (`commands/init.py` is the command).

`flow` reads the labels (GitHub or a snapshot), writes the new files atomically and says what was
inferred and what to run next; `draft` groups the labels by naming scheme and drafts the files'
content (pure functions); `files` builds labels.toml and config.toml as TOML documents.
"""
