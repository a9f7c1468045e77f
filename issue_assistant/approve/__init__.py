"""Approval: apply (or dismiss) the plan in the assistant's comment once a maintainer says so.

A vote is a 👍/👎 reaction on the assistant's comment or a `/assistant approve|dismiss` comment
after it, counted only from users whose role is in `approval.roles`. Only a comment written by
`approval.bot_login` is trusted. Writes are ordered so that a run that fails midway is completed
by the next one, and the comment says "approved" only once every other write succeeded.

The sweep (`sweep.py`) finds the assistant's comment (`assistant_comment.py`), holds a claim on it
while it writes (`claims.py`), applies the plan or says which votes did not count
(`uncounted.py`), and asks the reporter only what is still missing (`answered.py`).
"""
