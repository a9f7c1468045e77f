"""The base of engines that run a command-line agent (`claude`, `gemini`, `copilot`).

Per issue: write the context directory into a fresh working directory, start the issue search
(`issue-assistant search` answers from a socket served here, through `Moment.search`, so the
CLI only ever sees the index as it was at the moment), run the argv with a scrubbed environment
and a temporary HOME, kill the process group at the time limit, cap what is captured, then parse
the CLI's JSON. A subclass gives the argv, the environment keys it may see, and the parser.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socketserver
import subprocess
import sys
import tempfile
import threading
import time
from abc import abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import Field

from issue_assistant.decision import Decision, Usage
from issue_assistant.engines import launcher
from issue_assistant.engines.base import Engine, EngineOptions
from issue_assistant.engines.failures import EngineFailure, Kind, from_text
from issue_assistant.engines.prompt import check_answer, shown
from issue_assistant.errors import UserError
from issue_assistant.render import render
from issue_assistant.settings import current

if TYPE_CHECKING:
    from issue_assistant.context import Context

# What every engine process may see of our environment; the rest (GITHUB_TOKEN, INPUT_*, other
# engines' keys) never reaches it.
BASE_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ")
SOCKET_ENV = "ISSUE_ASSISTANT_SEARCH_SOCKET"


def _home() -> Path:
    """Our HOME (where the CLIs keep their logins)."""
    return Path(current().home or Path.home())


class CommandOptions(EngineOptions):
    """Options every command-line engine has (`[engines.NAME]`)."""

    binary: str = Field(default="", description="the command (default: the engine's name)")
    max_output_bytes: int = Field(default=4_000_000, ge=1024)
    use_login: bool = Field(
        default=True, description="copy your CLI login (not your settings) into the temporary HOME"
    )


@dataclass
class Finished:
    """A finished command: exit code and captured output (cut at the cap)."""

    code: int
    stdout: str
    stderr: str


@dataclass
class Reply:
    """What a CLI answered: the answer text, the usage it reported, and a session to resume."""

    text: str
    usage: Usage
    session: str | None = None


class SearchServer(socketserver.ThreadingUnixStreamServer):
    """Answers `issue-assistant search` calls from the engine process, as of the moment."""

    daemon_threads = True

    def __init__(self, path: str, context: Context) -> None:
        self.context = context
        self.seen: set[int] = set()
        self.queries = 0
        super().__init__(path, _SearchHandler)


class _SearchHandler(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        server: SearchServer = self.server  # type: ignore[assignment]
        try:
            request = json.loads(self.rfile.readline(65536) or b"{}")
            query = str(request.get("query", ""))[:500]
            limit = max(3, min(int(request.get("limit") or 10), 20))
        except (ValueError, TypeError):
            self.wfile.write(b"error: bad request\n")
            return
        server.queries += 1
        found = server.context.moment.search(query, limit, server.context.issue)
        server.seen.update(c.issue.number for c in found)
        rows = [
            {
                "number": c.issue.number,
                "title": c.issue.title,
                "state": c.issue.state,
                "labels": c.issue.labels,
                "score": c.score,
                "is_pull_request": c.issue.is_pull_request,
            }
            for c in found
        ]
        self.wfile.write(render("search.txt.j2", rows=rows).encode())


LAUNCHER = Path(__file__).with_name("launcher.py")
GRACE_S = 3.0  # past its own deadline, the launcher is killed from here


def protect_own_environment() -> None:
    """Make this process non-dumpable (Linux): its `/proc/PID/environ`, `mem` and `fd` then
    need CAP_SYS_PTRACE to read, which the launcher takes away from the engine (`launcher.py`);
    they hold the Action's secrets."""
    prctl = launcher._prctl()
    if prctl is not None:
        prctl(launcher.PR_SET_DUMPABLE, 0, 0, 0, 0)  # type: ignore[operator]


def run_command(
    argv: list[str],
    *,
    cwd: Path,
    env: dict[str, str],
    stdin: str | None,
    timeout: float,
    cap: int,
) -> Finished:
    """Run `argv` under the launcher (`launcher.py`): only `env`, no capabilities, every process
    it starts (also one that left the session) killed after `timeout` s, past `cap` output bytes
    or when it exits. Reading stops at the deadline whatever holds the pipes."""
    name = Path(argv[0]).name
    if shutil.which(argv[0], path=env.get("PATH")) is None:
        raise EngineFailure(f"cannot run {argv[0]}: not found on PATH", "setup")
    protect_own_environment()
    status_r, status_w = os.pipe()
    command = [sys.executable, "-I", str(LAUNCHER), str(status_w), f"{max(timeout, 0.1):.3f}"]
    try:
        proc = subprocess.Popen(
            [*command, *argv],
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            pass_fds=(status_w,),
        )
    except OSError as exc:
        os.close(status_r)
        raise EngineFailure(f"cannot run {argv[0]}: {exc.strerror}", "setup") from exc
    finally:
        os.close(status_w)
    over = threading.Event()
    out: dict[str, bytearray] = {"stdout": bytearray(), "stderr": bytearray()}

    def drain(key: str, stream: Any) -> None:
        fd = stream.fileno()
        while chunk := os.read(fd, 65536):  # what is there, not a full block: nothing is held
            buf = out[key]
            if len(buf) < cap:
                buf.extend(chunk[: cap - len(buf)])
            elif not over.is_set():
                over.set()
                _stop(proc)

    readers = [
        threading.Thread(target=drain, args=(n, getattr(proc, n)), daemon=True)
        for n in ("stdout", "stderr")
    ]
    for r in readers:
        r.start()
    if stdin is not None:
        try:
            proc.stdin.write(stdin.encode())  # type: ignore[union-attr]
            proc.stdin.close()  # type: ignore[union-attr]
        except OSError:
            pass
    end = time.monotonic() + max(timeout, 0.1) + GRACE_S
    try:
        proc.wait(timeout=max(end - time.monotonic(), 0.1))
    except subprocess.TimeoutExpired:
        _kill(proc)
        proc.wait()
        raise EngineFailure(f"{name} ran past {timeout:.0f} s", "transient") from None
    finally:
        _kill(proc)  # whatever is left in its group goes too (the launcher killed the rest)
        for r in readers:  # reading stops at the deadline, whoever still holds the pipes
            r.join(max(end - time.monotonic(), 0.2))
        status = _status(status_r)
    if status.get("timeout"):
        raise EngineFailure(f"{name} ran past {timeout:.0f} s", "transient")
    if over.is_set():
        raise EngineFailure(f"{name} printed more than {cap} bytes", "unknown")
    code = status.get("code")
    if not isinstance(code, int):
        code = proc.returncode
    return Finished(
        code, out["stdout"].decode(errors="replace"), out["stderr"].decode(errors="replace")
    )


def _status(fd: int) -> dict[str, Any]:
    """What the launcher reported (empty when it was killed first)."""
    try:
        data = b""
        while chunk := os.read(fd, 4096):
            data += chunk
    finally:
        os.close(fd)
    try:
        status = json.loads(data or b"{}")
    except ValueError:
        return {}
    return status if isinstance(status, dict) else {}


def _stop(proc: subprocess.Popen) -> None:
    """Ask the launcher to kill everything it started (it is a subreaper: nothing escapes)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        proc.send_signal(signal.SIGTERM)


def _kill(proc: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


class CommandEngine(Engine):
    """A CLI agent in a scratch directory: read-only tools, its own login, nothing else."""

    Options = CommandOptions
    options: CommandOptions
    needs_network = True
    uses_llm = True
    uses_tools = True
    strategies = ("agent", "rag")
    default_strategy = "agent"
    command: ClassVar[str]  # the executable's usual name
    package: ClassVar[str]  # how to install it
    key_env: ClassVar[tuple[str, ...]] = ()  # its own key or token variables
    login_files: ClassVar[tuple[str, ...]] = ()  # its login, relative to HOME
    login_hint: ClassVar[str] = ""
    # The CLI reports a resumed session's running cost, not the run's own (claude does).
    session_cost_is_total: ClassVar[bool] = False

    @property
    def binary(self) -> str:
        return self.options.binary or self.command

    def check_ready(self) -> None:
        if shutil.which(self.binary) is None:
            raise UserError(
                f"the {self.name} engine needs the `{self.binary}` command on PATH: "
                f"npm install -g {self.package} (or [engines.{self.name}] binary)"
            )
        if not self._has_key() and not self._logins():
            keys = " or ".join(self.key_env)
            raise UserError(
                f"the {self.name} engine is not logged in: set {keys}, {self.login_hint}"
            )

    def _has_key(self) -> bool:
        return bool(current().variables(*self.key_env))

    def _logins(self) -> list[Path]:
        if not self.options.use_login:
            return []
        home = _home()
        return [home / f for f in self.login_files if (home / f).is_file()]

    def environment(self, home: Path, socket: str) -> dict[str, str]:
        """PATH, locale, a temporary HOME, this engine's own key, and the search socket (read
        through the settings, which hold every variable a process may pass on)."""
        env = current().variables(*BASE_ENV, *self.key_env)
        env.update(
            HOME=str(home),
            XDG_CONFIG_HOME=str(home / ".config"),
            TMPDIR=str(home.parent),
            **{SOCKET_ENV: socket},
        )
        return env

    def setup_home(self, home: Path, work: Path) -> None:
        """Write the settings the CLI needs into the temporary HOME, and copy its login."""
        for src in self._logins():
            dest = home / src.relative_to(_home())
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest)

    @abstractmethod
    def argv(self, prompt: str, work: Path, *, resume: str | None = None) -> list[str]:
        """The command line; read-only tools only. `resume`: a session to continue."""

    def stdin(self, prompt: str) -> str | None:
        """The prompt on stdin (None: it is in the argv)."""
        return None

    @abstractmethod
    def parse(self, done: Finished) -> Reply:
        """The answer and usage in the CLI's output; EngineFailure (classified) when it failed."""

    def prompt(self, context: Context, note: str = "") -> str:
        return render(
            "command.md.j2",
            strategy=self.strategy,
            search=self.strategy == "agent",
            note=note,
        )

    def decide(self, context: Context) -> Decision:
        start = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="ia-") as tmp:
            root = Path(tmp)
            work, home = root / "work", root / "home"
            context.write(work)
            home.mkdir()
            self.setup_home(home, work)
            server = SearchServer(str(root / "s"), context)
            serving = threading.Thread(target=server.serve_forever, daemon=True)
            serving.start()
            try:
                env = self.environment(home, str(root / "s"))
                decision, usage = self._ask(context, work, env, server)
            finally:
                server.shutdown()
                server.server_close()
        usage = usage.model_copy(update={"latency_s": time.perf_counter() - start})
        return decision.model_copy(
            update={
                "engine": self.name,
                "model": self.model,
                "strategy": self.strategy,
                "usage": usage,
            }
        )

    def _ask(
        self, context: Context, work: Path, env: dict[str, str], server: SearchServer
    ) -> tuple[Decision, Usage]:
        """Run, then recover by class: schema -> one re-ask; limit -> one forced final answer."""
        usage = Usage()
        note, resume, kind = "", None, None
        for attempt in range(2):
            prompt = self.prompt(context, note)
            try:
                reply = self._once(prompt, work, env, resume)
            except EngineFailure as exc:
                exc.usage = usage
                if exc.kind != "limit" or attempt:
                    raise
                kind = "limit"
                note = "You ran out of turns: answer now, from what you have read, with no tools."
                resume = exc.session
                usage = usage.model_copy(update={"forced_submit": True})
                continue
            if resume and self.session_cost_is_total:
                own = max(reply.usage.cost_usd - usage.cost_usd, 0.0)
                reply.usage = reply.usage.model_copy(update={"cost_usd": own})
            usage = _add(usage, reply.usage)
            allowed = shown(context, self.strategy) | server.seen
            try:
                return check_answer(reply.text, context, allowed), usage
            except EngineFailure as exc:
                exc.usage = usage
                if exc.kind != "schema" or attempt:
                    raise
                usage = usage.model_copy(update={"reasks": usage.reasks + 1})
                note = f"Your previous answer was invalid: {exc}. Answer again."
                resume = reply.session
        raise EngineFailure(f"no answer after a {kind or 'second'} attempt", kind or "unknown")

    def _once(self, prompt: str, work: Path, env: dict[str, str], resume: str | None) -> Reply:
        done = run_command(
            self.argv(prompt, work, resume=resume),
            cwd=work,
            env=env,
            stdin=self.stdin(prompt),
            # A second early, so the process group is killed here before the pipeline gives up.
            timeout=max(0.5, self.deadline.remaining() - 1.0),
            cap=self.options.max_output_bytes,
        )
        return self.parse(done)


def failure(message: str, kind: Kind, session: str | None = None) -> EngineFailure:
    """An EngineFailure carrying the session to resume (for a forced final answer)."""
    return EngineFailure(message, kind, session=session)


def text_failure(name: str, done: Finished) -> EngineFailure:
    """Last resort: a failed run with no structured error, classified from its text: the first
    lines (where an `Error:` headline goes, e.g. copilot's "No authentication information
    found.") and the last ones."""
    text = [line for line in (done.stderr or done.stdout).strip().splitlines() if line.strip()]
    headline = next((line for line in text[:2] if line.startswith("Error")), None)
    shown = (headline or (text[-1] if text else "no output"))[:300]
    kind = from_text(" ".join(text[:2] + text[-5:]))
    return EngineFailure(f"{name} exited {done.code}: {shown}", kind)


def json_value(text: str) -> Any:
    """The JSON `text` holds; ValueError when it is not JSON or nested too deep to read."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("JSON nested too deep") from None


def json_object(text: str) -> dict[str, Any] | None:
    """The JSON object `text` holds, or None."""
    try:
        data = json_value(text)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def obj(data: dict[str, Any], key: str) -> dict[str, Any]:
    """`data[key]` when it is an object, else {} (a CLI's envelope is not trusted for shape)."""
    value = data.get(key)
    return value if isinstance(value, dict) else {}


def count(value: Any) -> int:
    """A non-negative whole number from an envelope field (anything else counts 0)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    return int(value) if 0 <= value < 1e15 else 0


def amount(value: Any) -> float | None:
    """A dollar amount from an envelope field, or None when it is not a finite number >= 0."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if 0 <= value < 1e9 else None


def _add(a: Usage, b: Usage) -> Usage:
    summed = ("tokens_in", "tokens_out", "cache_read_tokens", "cache_write_tokens", "cost_usd")
    summed += ("tool_calls", "turns")
    update: dict[str, Any] = {k: getattr(a, k) + getattr(b, k) for k in summed}
    update["cost_known"] = a.cost_known and b.cost_known
    return a.model_copy(update=update)
