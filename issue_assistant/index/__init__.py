"""A tantivy index of a repository's issues, searched as of a moment."""

from issue_assistant.index.search import Hit, IssueIndex

__all__ = ["Hit", "IssueIndex"]
