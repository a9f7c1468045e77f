"""The small process a command-line engine runs under (`engines/command.py` starts it).

    python -I launcher.py STATUS_FD SECONDS ARGV...

Standard library only, run as a script (`-I`: no site, no PYTHON* variables). It is started with
the scrubbed environment only, so the engine's parent holds none of the Action's secrets. Before
starting ARGV it (on Linux):

- drops every capability from the bounding set and sets no-new-privileges, so the engine and
  its children cannot read another process's `/proc/PID/environ` (the Action's own process is
  made non-dumpable by `command.py`, which then takes CAP_SYS_PTRACE to read, even for root);
- becomes a child subreaper, so a grandchild that calls `setsid()` is re-parented here instead
  of escaping: when ARGV exits, at SECONDS, or on SIGTERM, every process below this one is
  killed, and the pipes it held close.

It writes `{"code": N, "timeout": bool, "left": K}` to STATUS_FD (K: processes it had to kill
after ARGV ended) and exits.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import sys
import time

PR_SET_DUMPABLE = 4
PR_CAPBSET_DROP = 24
PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38
LAST_CAP = 63


def _prctl() -> object | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def confine() -> None:
    """No capabilities for what is started from here, no way to gain any, and the orphans."""
    prctl = _prctl()
    if prctl is None:
        return
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)  # type: ignore[operator]
    for cap in range(LAST_CAP, -1, -1):  # fails harmlessly past the last cap or unprivileged
        prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)  # type: ignore[operator]
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)  # type: ignore[operator]
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)  # type: ignore[operator]


def children(pid: int) -> list[int]:
    """The live processes whose parent is `pid` (from /proc)."""
    found = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return found
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 1 and int(fields[1]) == pid:
            found.append(int(name))
    return found


EXITED: dict[int, int] = {}  # pid -> exit code (negative: the signal), of reaped children


def reap() -> None:
    """Collect every exited child (orphans re-parented here included)."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        EXITED[pid] = os.waitstatus_to_exitcode(status)


def kill_all() -> int:
    """SIGKILL every process below this one, until none is left; how many were killed (each
    killed child's own children are re-parented here, the subreaper, and go next)."""
    me, killed = os.getpid(), 0
    for _ in range(200):
        reap()
        below = children(me)
        if not below:
            break
        for pid in below:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except OSError:
                pass
        time.sleep(0.01)
    reap()
    return killed


def main(argv: list[str]) -> int:
    status_fd, seconds, command = int(argv[0]), float(argv[1]), argv[2:]
    os.set_inheritable(status_fd, False)  # the engine never sees it
    confine()
    stop: list[bool] = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))

    def report(code: int, timeout: bool, left: int) -> None:
        os.write(status_fd, json.dumps({"code": code, "timeout": timeout, "left": left}).encode())
        os.close(status_fd)

    pid = os.fork()
    if pid == 0:  # the engine, with this process's environment (the scrubbed one)
        try:
            os.execvp(command[0], command)
        except OSError as exc:
            os.write(2, f"cannot run {command[0]}: {exc.strerror}\n".encode())
        os._exit(127)
    end = time.monotonic() + seconds
    timeout = False
    while pid not in EXITED:
        if stop or time.monotonic() >= end:
            timeout = not stop
            break
        reap()
        time.sleep(0.02)
    left = kill_all()
    report(EXITED.get(pid, -signal.SIGKILL), timeout, left)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
