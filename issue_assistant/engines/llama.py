"""The `llama` engine: a local GGUF model through llama-cpp-python (the `local` extra).

One chat completion per issue, constrained by a JSON schema grammar, so the answer always parses:
label names are enums of `labels.toml` and a duplicate can only be one of the candidates shown.
The model file is `[engine] model` (or `--model`); loaded models are kept for the process.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from issue_assistant.decision import Decision, Usage, answer_schema
from issue_assistant.engines.base import Engine, register
from issue_assistant.engines.prompt import parse_answer, prompts
from issue_assistant.errors import EngineError, UserError

if TYPE_CHECKING:
    from issue_assistant.context import Context

_models: dict[tuple[str, int, str], Any] = {}
_lock = threading.Lock()


def load_model(path: str, n_ctx: int, threads: int, chat_format: str) -> Any:
    """The llama.cpp model at `path`, loaded once per process (and settings)."""
    key = (path, n_ctx, chat_format)
    with _lock:
        if key not in _models:
            try:
                from llama_cpp import Llama
            except ImportError:
                raise UserError(
                    "the llama engine needs llama-cpp-python: pip install 'issue-assistant[local]'"
                ) from None
            _models[key] = Llama(
                model_path=path,
                n_ctx=n_ctx,
                n_threads=threads or max(1, (os.cpu_count() or 2)),
                chat_format=chat_format or None,
                verbose=False,
            )
        return _models[key]


def llama_schema(context: Context) -> dict[str, Any]:
    """The answer schema with the duplicate restricted to the candidates' numbers."""
    schema = answer_schema(context.labels)
    numbers = [c.issue.number for c in context.candidates]
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
    if numbers:
        dup["anyOf"][0]["properties"]["reason"] = {"type": "string", "maxLength": 200}
    return schema


@register
class LlamaEngine(Engine):
    """A local model: free, offline, private; quality depends entirely on the model."""

    name = "llama"
    uses_llm = True

    @property
    def model(self) -> str:
        return Path(self.config.engine.model).name if self.config.engine.model else ""

    def _model_path(self) -> str:
        from issue_assistant.settings import current

        path = self.config.engine.model or current().model or ""
        if not path:
            raise UserError("the llama engine needs a GGUF file: [engine] model or --model PATH")
        if not Path(path).is_file():
            raise UserError("model file not found", where=path)
        return path

    def decide(self, context: Context) -> Decision:
        cfg = self.config.llama
        llm = load_model(self._model_path(), cfg.n_ctx, cfg.threads, cfg.chat_format)
        system, user = prompts(context)
        user = self._fit(llm, system, user, cfg.n_ctx - cfg.max_tokens)
        start = time.perf_counter()
        try:
            reply = llm.create_chat_completion(
                messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
                response_format={"type": "json_object", "schema": llama_schema(context)},
                temperature=0.0,
                max_tokens=cfg.max_tokens,
            )
        except (RuntimeError, ValueError) as exc:
            raise EngineError(f"llama.cpp: {exc}") from exc
        choice = reply["choices"][0]
        if choice.get("finish_reason") == "length":
            raise EngineError(f"the answer was cut off at {cfg.max_tokens} tokens")
        decision = parse_answer(choice["message"]["content"] or "")
        usage = Usage(
            latency_s=time.perf_counter() - start,
            tokens_in=reply["usage"]["prompt_tokens"],
            tokens_out=reply["usage"]["completion_tokens"],
            turns=1,
        )
        return decision.model_copy(
            update={"engine": self.name, "model": self.model, "usage": usage}
        )

    @staticmethod
    def _fit(llm: Any, system: str, user: str, budget: int) -> str:
        """`user` shortened (from the end) so that both prompts fit in `budget` tokens."""
        used = len(llm.tokenize(system.encode())) + 64
        tokens = len(llm.tokenize(user.encode()))
        if used + tokens <= budget:
            return user
        if used + 256 >= budget:
            raise EngineError(f"the instructions alone need {used} tokens; raise [llama] n_ctx")
        room = budget - used
        keep = int(len(user) * room / tokens * 0.95)
        return user[:keep] + "\n\n(The rest was cut to fit the model's context.)"
