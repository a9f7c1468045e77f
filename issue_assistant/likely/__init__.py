"""Likely files: the files of the checkout an issue concerns, with their reasons and precision."""
