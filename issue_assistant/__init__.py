"""issue-assistant: proposes labels, duplicates and questions for new issues; writes after approval."""

__version__ = "0.1.0"
