"""issue-assistant: proposes labels, duplicates and questions; writes only after approval."""

__version__ = "1.0.0"
