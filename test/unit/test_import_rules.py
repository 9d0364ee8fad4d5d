"""The import rules, checked mechanically from every module's `import` statements (`ast`, lazy
imports inside functions included: they are dependencies too).

- `ipu.target` imports nothing of ours but `ipu.target` itself and leaf modules (modules that
  import nothing of ours);
- `ipu.dialects` imports only `ipu.target`, `ipu.abi`, `ipu.dialects` and `ipu.xdsl_fixes` (xDSL only),
  and no ladder dialect imports a higher one (graph, plan, tilemap, exchange, tasm);
- nothing outside `ipu.tools` imports `ipu.tools`;
- `ipu.runtime` imports no dialect and no transform, and the compiler (dialects, transforms,
  codegen, frontends) imports no runtime;
- `ipu.golden` imports no runtime (the reference never sees the package);
- no import cycles between modules, nor between packages (`ipu.X`, or a module at the top).

`KNOWN` lists tolerated violations (empty since issue 15): a violation not listed fails, and so
does a listed one that no longer occurs."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the package `ipu` is the repository root
SKIP = {"test", "build", "examples", "docs"}  # bench/ scripts are checked too

KNOWN: set[str] = set()
"""Violations tolerated for now: none (the branches of issue 15 removed the last ones)."""


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = [p for p in rel.parts if p != "__init__"]
    return ".".join(["ipu", *parts])


def modules() -> dict[str, Path]:
    out = {module_name(p): p for p in sorted(ROOT.glob("*.py"))}
    for d in sorted(ROOT.iterdir()):
        if d.is_dir() and d.name not in SKIP and not d.name.startswith((".", "__")) and any(d.glob("*.py")):
            out |= {module_name(p): p for p in sorted(d.rglob("*.py"))}
    return out


def _imports(path: Path, name: str, known: set[str]) -> Iterator[str]:
    """The modules of ours that the module `name` at `path` imports."""
    is_pkg = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "ipu" or a.name.startswith("ipu."):
                    yield a.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against this module's package
                base = name.split(".") if is_pkg else name.split(".")[:-1]
                base = base[: len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if mod != "ipu" and not mod.startswith("ipu."):
                continue
            subs = [f"{mod}.{a.name}" for a in node.names if f"{mod}.{a.name}" in known]
            yield from subs
            if len(subs) < len(node.names):  # names from the module itself
                yield mod


def import_graph() -> dict[str, set[str]]:
    mods = modules()
    known = set(mods)
    return {m: {i for i in _imports(p, m, known) if i in known and i != m} for m, p in mods.items()}


def _in(m: str, pkg: str) -> bool:
    return m == pkg or m.startswith(pkg + ".")


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


DIALECTS_MAY_IMPORT = ("ipu.target", "ipu.abi", "ipu.dialects", "ipu.xdsl_fixes")
LADDER = ("graph", "plan", "tilemap", "exchange", "tasm")
"""The ladder's dialects, highest first: a dialect may not import a higher one (what several
levels share lives in `ipu.dialects.shared`, below them all)."""
COMPILER = ("ipu.dialects", "ipu.transforms", "ipu.codegen", "ipu.frontends")


def _rung(m: str) -> int | None:
    name = m.removeprefix("ipu.dialects.")
    return LADDER.index(name) if m.startswith("ipu.dialects.") and name in LADDER else None


def package_of(m: str) -> str:
    """`ipu.X` for a module of the subpackage X, the module itself for one at the top."""
    parts = m.split(".")
    return ".".join(parts[:2])


def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for m, deps in graph.items():
        out.setdefault(package_of(m), set()).update(package_of(d) for d in deps if package_of(d) != package_of(m))
    for deps in list(out.values()):
        for d in deps:
            out.setdefault(d, set())
    return out


def violations(graph: dict[str, set[str]]) -> set[str]:
    leaves = {m for m, deps in graph.items() if not deps}
    found = set()
    for m, deps in graph.items():
        for d in sorted(deps):
            rm, rd = _rung(m), _rung(d)
            bad = (
                (_in(m, "ipu.target") and not _in(d, "ipu.target") and d not in leaves)
                or (_in(m, "ipu.dialects") and not any(_in(d, p) for p in DIALECTS_MAY_IMPORT))
                or (rm is not None and rd is not None and rd < rm)
                or (not _in(m, "ipu.tools") and _in(d, "ipu.tools"))
                or (_in(m, "ipu.runtime") and (_in(d, "ipu.dialects") or _in(d, "ipu.transforms")))
                or (any(_in(m, c) for c in COMPILER) and _in(d, "ipu.runtime"))
                or (_in(m, "ipu.golden") and _in(d, "ipu.runtime"))
            )
            if bad:
                found.add(f"{m} imports {d}")
    found |= {"cycle among " + ", ".join(c) for c in _cycles(graph)}
    found |= {"package cycle among " + ", ".join(c) for c in _cycles(package_graph(graph))}
    return found


def test_the_checker_sees_imports_and_cycles() -> None:
    """The checker itself: it finds a lazy import, a relative import, a cycle of modules and one
    of packages, and a dialect importing a higher one."""
    g = {"ipu.dialects.a": {"ipu.runtime.x"}, "ipu.runtime.x": {"ipu.dialects.a"}, "ipu.tools.t": set()}
    assert violations(g) == {
        "ipu.dialects.a imports ipu.runtime.x",
        "ipu.runtime.x imports ipu.dialects.a",
        "cycle among ipu.dialects.a, ipu.runtime.x",
        "package cycle among ipu.dialects, ipu.runtime",
    }
    g = {"ipu.dialects.tasm": {"ipu.dialects.tilemap"}, "ipu.dialects.tilemap": {"ipu.dialects.shared"}}
    g |= {"ipu.dialects.shared": set(), "ipu.golden.a": {"ipu.codegen.b"}, "ipu.codegen.b": {"ipu.api"}}
    g |= {"ipu.api": {"ipu.golden.c"}, "ipu.golden.c": set()}
    assert violations(g) == {
        "ipu.dialects.tasm imports ipu.dialects.tilemap",
        "package cycle among ipu.api, ipu.codegen, ipu.golden",
    }
    graph = import_graph()
    assert "ipu.context" in graph["ipu.api"]  # a top-level import
    assert "ipu.transforms.plan.search" in graph["ipu.transforms.plan.plan_ops"]  # a lazy one, inside a function


def test_import_rules() -> None:
    found = violations(import_graph())
    new = sorted(found - KNOWN)
    fixed = sorted(KNOWN - found)
    assert not new, "import rule violations:\n  " + "\n  ".join(new)
    assert not fixed, "no longer violated (remove from KNOWN):\n  " + "\n  ".join(fixed)


def test_every_package_is_declared() -> None:
    """A non-editable install only ships the packages `pyproject.toml` lists: each directory
    holding an `__init__.py` (outside tests, benchmarks and the virtual environment) is listed."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {
        ".".join(("ipu", *p.parent.relative_to(ROOT).parts))
        for p in ROOT.rglob("__init__.py")
        if not ({"test", "bench", "build", "examples", "docs"} & set(p.relative_to(ROOT).parts))
        and not any(part.startswith(".") for part in p.relative_to(ROOT).parts)
    }
    assert found - listed == set(), f"packages missing from pyproject.toml: {sorted(found - listed)}"
