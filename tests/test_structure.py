"""The package's import structure: no import circles, and no module importing a floor above its
own. Every `import` counts, inside functions and under `TYPE_CHECKING` too: a type-only import
up a floor still ties the lower module to the higher one. The floors, bottom first, are the
README's tour."""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "issue_assistant"

#: bottom first; a module's floor is that of its most specific entry (a module named, else its
#: package). Modules of one floor may import each other, never in a circle.
FLOORS: list[tuple[str, ...]] = [
    # small helpers, and the engine registry (names and option models, imports of neither config
    # nor engines: an engine and a built-in's options are loaded by name when first asked for)
    ("", "errors", "names", "progress", "atomic", "tomllines", "labelnames", "urls", "render",
     "sanitize", "forms", "engine_registry"),
    ("config", "settings", "cachelock"),
    ("tracker", "writes"),
    ("index", "asking", "formlabels", "decision"),
    # likely files: the checkout's code, the signals an issue gives, the fixes of earlier issues
    ("likely",),
    ("learn", "comment", "preset"),
    # the repository at a moment, and one issue's context built from it
    ("moment", "context", "context_build", "approve", "votes", "followup", "named", "sync"),
    ("tools",),
    ("engines",),
    ("pipeline",),
    ("evaluate", "live", "backlog", "index_run", "init", "published", "webhook"),
    ("commands", "cli", "action", "__main__"),
]  # fmt: skip


def modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The package's modules `name` imports (relative imports resolved)."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package[: len(package) - (node.level - 1)]
                base = ".".join([*up, base] if base else up)
            targets = [f"{base}.{a.name}" for a in node.names] + [base]
        else:
            continue
        for target in targets:
            if target != "issue_assistant" and not target.startswith("issue_assistant."):
                continue
            inner = target.removeprefix("issue_assistant").removeprefix(".")
            while inner and inner not in known:
                inner = inner.rpartition(".")[0]
            if inner in known and inner != name:
                out.add(inner)
    return out


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports(name, path, known) for name, path in known.items()}


def floor(name: str) -> int | None:
    matches = [
        (len(entry), level)
        for level, entries in enumerate(FLOORS)
        for entry in entries
        if name == entry or (entry and name.startswith(entry + "."))
    ]
    return max(matches)[1] if matches else None


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                part = []
                while True:
                    top = stack.pop()
                    on.discard(top)
                    part.append(top)
                    if top == node:
                        break
                if len(part) > 1:
                    found.append(sorted(part))
    return found


def test_every_module_has_a_floor():
    assert [m for m in sorted(modules()) if floor(m) is None] == []


def test_no_import_circle():
    assert circles(graph()) == []


def test_no_module_imports_a_floor_above_its_own():
    upward = [
        f"{name} (floor {floor(name)}) imports {dep} (floor {floor(dep)})"
        for name, deps in sorted(graph().items())
        for dep in sorted(deps)
        if (floor(dep) or 0) > (floor(name) or 0)
    ]
    assert upward == []


def test_the_checks_see_a_circle_and_an_upward_import():
    # the checks themselves: a made-up graph with one circle, and real floors
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert floor("config") < floor("engines.base") and floor("engine_registry") == 0
    assert floor("tracker.client") == floor("tracker") and floor("evaluate.gold") == 10
    assert floor("index.search") < floor("likely.rank") < floor("learn")
    assert floor("config.labels") == floor("config.sections") < floor("writes")
    assert floor("approve.sweep") == floor("approve.claims") == floor("votes")
    # the repository at a moment stands on what it holds, below the tools and engines reading it
    assert floor("learn.learned") < floor("moment") == floor("context") < floor("tools")


# ---- capabilities are declared, not probed --------------------------------------------------

#: the names the package holds a tracker, an engine, a context, a tool source, a moment, the
#: learned state, an issue index or a code index under
HOLDERS = re.compile(r"^_?(\w*tracker|\w*engine|e|context|ctx|view|source|listed|gh|moment|learned|"
                     r"\w*index|indexes|code)$", re.I)  # fmt: skip
#: the types of trackers, engines, contexts, moments, the learned state and indexes
TYPES = re.compile(r"^(\w*Tracker|\w*Engine|AsOfView|\w*Snapshot|CachedReads|LiveIssues|"
                   r"Context|Moment|Searched|\w*Learned|Beside|Buckets|"
                   r"\w*Index|CommitIndexes)$")  # fmt: skip
BUILTINS = {"str", "int", "float", "bool", "bytes", "dict", "list", "tuple", "set"}
#: (module, call) probes that stay, with why (none: every capability is a declared member)
ALLOWED_PROBES: set[tuple[str, str]] = set()


def _named(node: ast.expr) -> str:
    return node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")


def probes(source: str) -> list[str]:
    """The `getattr`/`hasattr`/`setattr`/`isinstance` calls on a tracker, an engine, a context
    or an index, and the uses of such an object's `__dict__` (an undeclared member)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Attribute)
            and node.attr == "__dict__"
            and HOLDERS.match(_named(node.value))
        ):
            found.append(ast.unparse(node))
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.args):
            continue
        fn, first = node.func.id, node.args[0]
        if fn in ("getattr", "hasattr", "setattr") and HOLDERS.match(_named(first)):
            found.append(ast.unparse(node))
        elif fn == "isinstance" and len(node.args) == 2:
            kinds = node.args[1]
            names = [_named(k) for k in getattr(kinds, "elts", [kinds])]
            if any(TYPES.match(n) for n in names) or (
                HOLDERS.match(_named(first)) and not set(names) <= BUILTINS
            ):
                found.append(ast.unparse(node))
    return found


def test_no_module_probes_a_tracker_an_engine_or_a_context():
    """What a tracker, an engine, a context or an index can do or keeps is a member of its type
    (None where it cannot), read directly: none is asked at run time whether it has an
    attribute, and none is given one its type does not declare."""
    found = {
        (name, call)
        for name, path in modules().items()
        for call in probes(path.read_text(encoding="utf-8"))
    }
    assert sorted(found - ALLOWED_PROBES) == []
    assert found >= ALLOWED_PROBES  # an exception no longer needed goes


def test_the_probe_check_sees_a_probe():
    code = """
getattr(tracker, "rate_remaining", None)
hasattr(self.engine, "label_source")
getattr(context, "pair_cache", None)
isinstance(tracker, AsOfView)
isinstance(view, Checkout)
isinstance(source, str)
getattr(args, "engine", None)
getattr(context.index, "vectors", None)
getattr(index, "memo", None)
setattr(code, "_packages", found)
code.__dict__.setdefault("_spans", {})
isinstance(found, CodeIndex)
getattr(hit, "path", None)
"""
    assert probes(code) == [
        "getattr(tracker, 'rate_remaining', None)",
        "hasattr(self.engine, 'label_source')",
        "getattr(context, 'pair_cache', None)",
        "isinstance(tracker, AsOfView)",
        "isinstance(view, Checkout)",
        "getattr(context.index, 'vectors', None)",
        "getattr(index, 'memo', None)",
        "setattr(code, '_packages', found)",
        "isinstance(found, CodeIndex)",
        "code.__dict__",  # an attribute, met deeper in the tree than the calls
    ]


# ---- one door for writes ----------------------------------------------------------------------

#: a tracker's write methods (`tracker.base.WritableTracker`, and GitHub's reactions)
WRITES = {"add_labels", "remove_label", "create_comment", "edit_comment", "delete_comment",
          "close", "claim", "release", "add_reaction"}  # fmt: skip
TRACKERS = re.compile(r"^_?(\w*tracker|gh|source|view|listed)$", re.I)


def writes(source: str) -> list[str]:
    """The uses of a tracker's write methods (called or handed on)."""
    return [
        ast.unparse(node)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Attribute)
        and node.attr in WRITES
        and TRACKERS.match(_named(node.value))
    ]


def test_only_the_writer_writes_to_a_tracker():
    """Every write goes through `writes.Writer` (which honours the writes mode and records what
    it did): no other module calls a tracker's write methods."""
    found = [
        f"{name}: {use}"
        for name, path in sorted(modules().items())
        if name != "writes"
        for use in writes(path.read_text(encoding="utf-8"))
    ]
    assert found == []
    assert writes(modules()["writes"].read_text(encoding="utf-8"))  # the check sees the door


def test_the_writes_check_sees_a_write():
    code = """
tracker.delete_comment(own_id)
self.tracker.release(comment_id, claim.id)
call(self._tracker.add_labels, 1, ["bug"])
writer.edit_comment(1, "x")
reader.close()
os.close(fd)
"""
    assert writes(code) == [
        "tracker.delete_comment",
        "self.tracker.release",
        "self._tracker.add_labels",
    ]


# ---- no re-exports: a name is imported from where it is defined ------------------------------

#: the imports kept though unused, with why
UNUSED_IMPORTS = {
    "tools": "registers the tools",
    "engines.anthropic": "tells whether the SDK is installed",
    "engines.llama": "tells whether llama-cpp-python is installed",
}


def reexports(name: str, path: Path) -> list[str]:
    """What a module hands on from elsewhere: imports kept unused (`noqa: F401`) and names in
    `__all__` it imports rather than defines (a package's `__init__` is its interface)."""
    text = path.read_text(encoding="utf-8")
    found = [f"line {i}" for i, line in enumerate(text.splitlines(), 1) if "noqa: F401" in line]
    if path.name != "__init__.py":
        tree = ast.parse(text)
        imported = {
            (a.asname or a.name).split(".")[0]
            for node in tree.body
            if isinstance(node, ast.Import | ast.ImportFrom)
            for a in node.names
        }
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
            ):
                found += [n for n in ast.literal_eval(node.value) if n in imported]
    return found


def test_no_module_hands_on_names_from_elsewhere():
    """Every user imports a name from its home: none is kept in an old home for them."""
    found = {
        name: where
        for name, path in sorted(modules().items())
        if name not in UNUSED_IMPORTS and (where := reexports(name, path))
    }
    assert found == {}
    assert all(reexports(name, modules()[name]) for name in UNUSED_IMPORTS)


def test_the_reexport_check_sees_one(tmp_path):
    module = tmp_path / "m.py"
    module.write_text('from a import b\nfrom c import d  # noqa: F401\n\n__all__ = ["b", "e"]\n')
    assert reexports("m", module) == ["line 2", "b"]
