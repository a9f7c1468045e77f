"""The backlog: the open issues nobody triaged, and the duplicates already in the tracker.

`selection` picks the open issues lacking a label of a configured group (from the index, no
request) and says which rule skips each; `state` keeps what earlier runs did (resume, the day's
count); `run` analyzes each as of now through the live path (`live.analyze_live`), within
`--limit`, `[backlog] per_day` and the token's hourly budget; `groups` finds groups of open
duplicates and `report` renders what a run proposed.
"""
