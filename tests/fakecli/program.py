"""A fake command-line agent (claude, gemini or copilot: its file name says which).

It records what it was started with (argv, environment, working directory, stdin, the files it
can see, its HOME's settings) in `calls.jsonl` beside itself, then plays the next step of
`steps.json` there: run the issue search, print, flood, hang (with a child), and exit.
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

here = Path(sys.argv[0]).resolve().parent
steps = json.loads((here / "steps.json").read_text())
count_file = here / "count"
n = int(count_file.read_text()) if count_file.exists() else 0
count_file.write_text(str(n + 1))
step = steps[min(n, len(steps) - 1)]
home = Path(os.environ.get("HOME", "/nonexistent"))
record = {
    "argv": sys.argv[1:],
    "env": dict(os.environ),
    "cwd": os.getcwd(),
    "stdin": "" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.read(),
    "files": sorted(os.listdir(".")),
    "home": {
        str(p.relative_to(home)): p.read_text()
        for p in home.rglob("*")
        if p.is_file() and p.stat().st_size < 100_000
    },
}
if step.get("search"):
    found = subprocess.run(
        ["issue-assistant", "search", step["search"], "--limit", "5"],
        capture_output=True,
        text=True,
    )
    record["search"] = found.stdout + found.stderr
with open(here / "calls.jsonl", "a") as fh:
    fh.write(json.dumps(record) + "\n")
if step.get("child"):
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    (here / "child.pid").write_text(str(child.pid))
if step.get("sleep"):
    time.sleep(step["sleep"])
if step.get("flood"):
    block = b"x" * 1_000_000
    for _ in range(step["flood"]):
        sys.stdout.buffer.write(block)
    sys.stdout.flush()
sys.stdout.write(step.get("stdout", ""))
sys.stderr.write(step.get("stderr", ""))
sys.exit(step.get("code", 0))
