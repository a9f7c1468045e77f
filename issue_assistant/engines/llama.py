"""The `llama` engine: a local GGUF model through llama-cpp-python (the `local` extra).

One chat completion per issue, constrained by a JSON schema grammar, so the answer always parses:
label names are enums of `labels.toml` and a duplicate can only be one of the candidates shown.
The model file is `[engine] model` (or `--model`). A loaded model is kept for the process, keyed
by every load setting, and one lock per model serialises its completions (llama.cpp cannot run
two on one context at once, and `evaluate --jobs` threads share it).
"""

from __future__ import annotations

import atexit
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import Field

from issue_assistant.decision import answer_schema
from issue_assistant.engine_registry import register
from issue_assistant.engines.failures import EngineFailure
from issue_assistant.engines.llm import LLMEngine, LLMOptions, Run
from issue_assistant.errors import UserError
from issue_assistant.names import install_line

if TYPE_CHECKING:
    from issue_assistant.context import Context

LoadKey = tuple[str, int, int, str]
_models: dict[LoadKey, tuple[Any, threading.Lock]] = {}
_lock = threading.Lock()
NEEDS_LLAMA = f"the llama engine needs llama-cpp-python: {install_line('local')}"


class LlamaOptions(LLMOptions):
    """`[engines.llama]` (formerly `[llama]`): a local GGUF model (its path is `[engine] model`)."""

    n_ctx: int = Field(default=4096, ge=512)
    max_tokens: int = Field(default=384, ge=16)
    threads: int = Field(default=0, ge=0)
    chat_format: str = ""


def load_model(path: str, n_ctx: int, threads: int, chat_format: str) -> tuple[Any, threading.Lock]:
    """The llama.cpp model at `path` and its lock, loaded once per process and load settings."""
    threads = threads or max(1, os.cpu_count() or 2)
    key: LoadKey = (str(Path(path).resolve()), n_ctx, threads, chat_format)
    with _lock:
        if key not in _models:
            try:
                from llama_cpp import Llama
            except ImportError:
                raise UserError(NEEDS_LLAMA) from None
            llm = Llama(
                model_path=path,
                n_ctx=n_ctx,
                n_threads=threads,
                chat_format=chat_format or None,
                verbose=False,
            )
            _models[key] = (llm, threading.Lock())
            # Freed before the interpreter tears llama.cpp's bindings down (else its __del__
            # fails at exit with "'NoneType' object is not callable").
            atexit.register(llm.close)
        return _models[key]


def llama_schema(context: Context, allowed: set[int]) -> dict[str, Any]:
    """The answer schema with the duplicate restricted to the numbers shown."""
    schema = answer_schema(context.labels)
    numbers = sorted(allowed)
    dup = schema["properties"]["duplicate"]
    if numbers:
        dup["anyOf"][0]["properties"]["number"] = {"type": "integer", "enum": numbers}
    else:
        schema["properties"]["duplicate"] = {"type": "null"}
    # A small model can ramble inside a string until max_tokens: bound every string.
    props = schema["properties"]
    props["questions"] = {
        "type": "array",
        "items": {"type": "string", "maxLength": 160},
        "maxItems": 3,
    }
    props["summary"] = {"type": "string", "maxLength": 300}
    props.pop("files", None)  # a small local model's guesses at paths are noise: not asked
    if numbers:
        dup["anyOf"][0]["properties"]["reason"] = {"type": "string", "maxLength": 200}
    return schema


VERIFY_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["same", "reason"],
    "properties": {"same": {"type": "boolean"}, "reason": {"type": "string", "maxLength": 200}},
}


@register
class LlamaEngine(LLMEngine):
    """A local model: free, offline, private; quality depends entirely on the model."""

    name = "llama"
    Options = LlamaOptions
    options: LlamaOptions
    strategies = ("zero-shot", "rag")
    default_strategy = "rag"

    @property
    def model(self) -> str:
        return Path(self.config.engine.model).name if self.config.engine.model else ""

    def _model_path(self) -> str:
        from issue_assistant.settings import current

        path = self.config.engine.model or current().model or ""
        if not path:
            raise UserError("the llama engine needs a GGUF file: [engine] model or --model PATH")
        if not Path(path).is_file():
            raise UserError("model file not found (set [engine] model or --model)", where=path)
        return path

    def check_ready(self) -> None:
        self._model_path()
        try:
            import llama_cpp  # noqa: F401
        except ImportError:
            raise UserError(NEEDS_LLAMA) from None

    def _chat(self, run: Run, messages: list[dict[str, str]], schema: dict, max_tokens: int):
        o = self.options
        llm, lock = load_model(self._model_path(), o.n_ctx, o.threads, o.chat_format)
        # A completion is bounded by max_tokens; the pipeline stops waiting at the issue's limit
        # and cancels the deadline: a cancelled issue starts no further completion (also not one
        # it was waiting for the model to start), so the next issue gets the model at once.
        with lock:
            if run.deadline.cancelled.is_set():
                raise EngineFailure("no answer within the issue's time", "limit")
            # A fresh context for every completion: reusing the previous prompt's prefix changes
            # llama.cpp's batching and so its numerics, and one issue could get two answers.
            llm.reset()
            try:
                reply = llm.create_chat_completion(
                    messages=messages,
                    response_format={"type": "json_object", "schema": schema},
                    temperature=0.0,
                    max_tokens=max_tokens,
                )
            except (RuntimeError, ValueError) as exc:
                raise EngineFailure(f"llama.cpp: {exc}", "unknown") from exc
        if run.deadline.remaining() <= 0:
            raise EngineFailure("no answer within the issue's time", "limit")
        self.price(run, reply["usage"]["prompt_tokens"], reply["usage"]["completion_tokens"])
        choice = reply["choices"][0]
        if choice.get("finish_reason") == "length":
            raise EngineFailure(f"the answer was cut off at {max_tokens} tokens", "limit")
        return choice["message"]["content"] or ""

    def price(self, run: Run, tokens_in: int, tokens_out: int, **cache: int) -> None:
        run.add(tokens_in=tokens_in, tokens_out=tokens_out)  # local: free

    def complete(self, run: Run, system: str, user: str) -> Any:
        o = self.options
        llm, _ = load_model(self._model_path(), o.n_ctx, o.threads, o.chat_format)
        user = self._fit(llm, system, user, o.n_ctx - o.max_tokens)
        run.state["messages"] = [
            {"role": "system", "content": system},
            {"role": "user", "content": user},
        ]
        run.state["schema"] = llama_schema(run.context, run.allowed)
        run.add(turns=1)
        answer = self._chat(run, run.state["messages"], run.state["schema"], o.max_tokens)
        run.state["answer"] = answer
        return answer

    def reask(self, run: Run, error: str) -> Any:
        messages = run.state["messages"] + [
            {"role": "assistant", "content": run.state.get("answer", "")},
            {"role": "user", "content": f"That answer is invalid: {error}. Answer again."},
        ]
        run.add(turns=1)
        return self._chat(run, messages, run.state["schema"], self.options.max_tokens)

    def yes_no(self, run: Run, prompt: str) -> Any:
        return self._chat(run, [{"role": "user", "content": prompt}], VERIFY_SCHEMA, 120)

    @staticmethod
    def _fit(llm: Any, system: str, user: str, budget: int) -> str:
        """`user` shortened (from the end) so that both prompts fit in `budget` tokens."""
        used = len(llm.tokenize(system.encode())) + 64
        tokens = len(llm.tokenize(user.encode()))
        if used + tokens <= budget:
            return user
        if used + 256 >= budget:
            raise EngineFailure(
                f"the instructions alone need {used} tokens; raise [engines.llama] n_ctx", "setup"
            )
        room = budget - used
        keep = int(len(user) * room / tokens * 0.95)
        return user[:keep] + "\n\n(The rest was cut to fit the model's context.)"
