"""The two configuration files, parsed into typed objects: `labels.toml` (`labels.py`) holds the
label groups, `config.toml` (`sections.py`) the engine, approval, project and feature sections;
`files.py` finds them, `weak_spots.py` says what will make the engines answer worse, and
`strict.py` reads a file into a strict model.

Unknown keys, wrong types (strict: `"2"` is not a number, `"no"` not a boolean), infinite or NaN
numbers, invalid label names, unknown roles or engines, duplicate labels and labels in two groups
are errors naming file:line and key.
"""
