"""Rerun every benchmark offline and rewrite its section of docs/benchmarks.md.

    python bench/run.py [--only NAME ...]           rewrite the published tables
    python bench/run.py --quick [--only NAME ...]   a smoke test: print, never publish

Each benchmark is a module `bench/section_NAME.py` with `TITLE: str` and
`run(quick: bool = False) -> str` returning Markdown. Its output replaces the text between
`<!-- section:NAME -->` and `<!-- /section:NAME -->` in docs/benchmarks.md (appended under a
`## TITLE` heading when the markers are missing); everything outside the markers is kept.
`--quick` runs smaller versions whose figures are not the published ones: it prints them, or
writes them to `--doc FILE` when that is not a file under docs/.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "benchmarks.md"


def sections(bench: Path = ROOT / "bench") -> list[str]:
    return sorted(p.stem.removeprefix("section_") for p in bench.glob("section_*.py"))


def load(name: str, bench: Path = ROOT / "bench"):  # noqa: ANN201 - a module
    path = bench / f"section_{name}.py"
    spec = importlib.util.spec_from_file_location(f"bench.section_{name}", path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def replace_section(text: str, name: str, title: str, body: str) -> str:
    """`text` with the section `name` set to `body` (appended with its heading when missing)."""
    start, end = f"<!-- section:{name} -->", f"<!-- /section:{name} -->"
    block = f"{start}\n{body.strip()}\n{end}"
    pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), re.DOTALL)
    if pattern.search(text):
        return pattern.sub(lambda _: block, text, count=1)
    return text.rstrip() + f"\n\n## {title}\n\n{block}\n"


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="smaller runs, for a smoke test: never published"
    )
    parser.add_argument(
        "--only", nargs="*", metavar="NAME", choices=sections(), help="only these sections"
    )
    parser.add_argument(
        "--doc",
        type=Path,
        default=None,
        help="the file to rewrite (default: docs/benchmarks.md; with --quick: print)",
    )
    return parser


def published(path: Path) -> bool:
    """Whether `path` is one of the published documents (a file under docs/)."""
    return path.resolve().is_relative_to((ROOT / "docs").resolve())


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.quick and args.doc is not None and published(args.doc):
        print(
            f"bench: --quick figures are not the published ones: not writing {args.doc} "
            "(give --doc a file outside docs/, or drop --doc to print them)",
            file=sys.stderr,
        )
        return 2
    doc = args.doc if args.doc is not None or args.quick else DOC
    sys.path.insert(0, str(ROOT))
    names = args.only or sections()
    text = "# Benchmarks\n"
    if doc is not None and doc.is_file():
        text = doc.read_text(encoding="utf-8")
    for name in names:
        module = load(name)
        start = time.perf_counter()
        print(f"bench: {name} ...", file=sys.stderr, flush=True)
        body = module.run(quick=args.quick)
        print(f"bench: {name} done in {time.perf_counter() - start:.0f} s", file=sys.stderr)
        if doc is None:
            print(f"<!-- section:{name} (--quick, not published) -->\n{body.strip()}\n")
            continue
        text = replace_section(text, name, module.TITLE, body)
        doc.write_text(text, encoding="utf-8")  # after each, so a failure keeps the rest
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
