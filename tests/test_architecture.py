"""The import rules of docs/architecture.md, read from the source with ``ast``.

Every ``import`` and ``from ... import`` counts, function-level and
``if __name__ == "__main__"`` ones included.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("instances", "bounds", "heuristics", "milp", "benchmarks")
#: What each package may import (besides itself).
ALLOWED = {
    "instances": set(),
    "bounds": {"instances"},
    "heuristics": {"instances", "bounds"},
    "milp": {"instances", "bounds", "heuristics"},
    "benchmarks": {"instances", "bounds", "heuristics", "milp"},
}
#: FAR's chain, lowest first: each module imports only modules before it.
FAR_CHAIN = ("heuristics.far_tree", "heuristics.far_refine", "heuristics.far_phase2", "heuristics.far_report",
             "heuristics.far_batch", "heuristics.far_multibatch", "heuristics.far_cli", "heuristics.far")


def _modules() -> dict[str, Path]:
    out = {}
    for pkg in PACKAGES:
        for f in sorted((ROOT / pkg).glob("*.py")):
            out[pkg if f.stem == "__init__" else f"{pkg}.{f.stem}"] = f
    return out


@functools.cache
def _graph() -> dict[str, frozenset[str]]:
    """Module -> the project modules it imports (``from pkg import mod`` counts as importing ``pkg.mod``)."""
    mods = _modules()
    graph = {}
    for name, path in mods.items():
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets |= {a.name for a in node.names if a.name.split(".")[0] in PACKAGES}
            elif isinstance(node, ast.ImportFrom):
                assert node.level == 0, f"{path}: relative import"
                base = node.module or ""
                if base.split(".")[0] in PACKAGES:
                    targets |= {f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names}
        graph[name] = frozenset(targets - {name})
    return graph


def _cycles(graph: dict[str, frozenset[str]] | dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_graph_sees_function_level_imports():
    graph = _graph()
    assert "heuristics.far" in graph["milp.mig"]  # a lazy import inside a function (_default_hint)
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycle_anywhere():
    assert _cycles(_graph()) == []


def test_packages_import_only_downwards():
    bad = [f"{a} -> {b}" for a, targets in sorted(_graph().items()) for b in sorted(targets)
           if b.split(".")[0] != a.split(".")[0] and b.split(".")[0] not in ALLOWED[a.split(".")[0]]]
    assert bad == []


def test_far_is_a_chain():
    graph = _graph()
    for i, mod in enumerate(FAR_CHAIN):
        far_deps = {t for t in graph[mod] if t in FAR_CHAIN}
        assert far_deps <= set(FAR_CHAIN[:i]), (mod, far_deps - set(FAR_CHAIN[:i]))


@pytest.mark.parametrize("module", ["instances.mig_check"])
def test_the_checker_shares_no_method_mechanics(module):
    assert _graph()[module] <= {"instances.errors", "instances.gpus", "instances.mig_problem",
                                "instances.mig_schedule", "instances"}


def test_docs_architecture_lists_every_module_and_no_other():
    # docs/architecture.md's "Every module" tables are the map a newcomer reads: a module missing from them,
    # or a row whose module is gone, makes the map wrong
    import re

    text = (ROOT / "docs" / "architecture.md").read_text()
    section = text[text.index("## Every module"):]
    listed = set()
    for block in re.split(r"^### ", section, flags=re.M)[1:]:
        package = re.match(r"`(\w+)/`", block).group(1)
        listed |= {f"{package}.{name}" for name in re.findall(r"^\| `(\w+)` \|", block, flags=re.M)}
    present = {f"{p}.{f.stem}" for p in PACKAGES for f in (ROOT / p).glob("*.py")
               if f.name not in ("__init__.py", "__main__.py")}
    assert sorted(present - listed) == [], "modules missing from docs/architecture.md"
    assert sorted(listed - present) == [], "rows of docs/architecture.md without a module"
