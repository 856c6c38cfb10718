"""Layout check: import cycles, upward imports of the package root, imports against the
layer table, flat modules, module sizes, and the public namespace.

usage: python tools/layout_check.py src [--max-lines N] [--layers FILE]
       (from the project root; .ci/run runs it)

Nodes are gradtape's subpackages (gradtape.ir, gradtape.ops, ...) and its top-level
modules; an import from one node to another is an edge. Exits 1, after printing the
figures, when there is

- a cycle between nodes;
- an upward import of the package root: a module that the root imports (directly or
  through other nodes) importing ``gradtape`` itself (``import gradtape``,
  ``from gradtape import x``, ``from .. import x`` resolving to the root, where ``x`` is
  not a submodule). That is a cycle through ``__init__``; a lower layer that needs
  something from above has it installed by the higher one (docs/architecture.md). Only
  what the root never imports (``__main__``, ``cli/``: the program) may import it;
- an import from one package to another that its row of the layer table does not allow
  (the table "Packages and what each may import" of --layers FILE, by default the
  docs/architecture.md beside src; a package the table lacks is reported too);
- a flat module beside the packages other than ``__init__``, ``__main__`` and the
  public namespace shims (``PUBLIC_MODULES``, imported by their path);
- a module over --max-lines lines;
- a public name of ``gradtape`` that is a module the docs don't promise.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass

ROOT = "gradtape"
# Public names of gradtape that are modules or namespaces the docs promise.
PUBLIC_MODULES = frozenset({
    "nn", "linalg", "math", "random", "optimizers", "keras", "config", "errors", "special",
    "fft", "experimental", "autodiff", "testing", "scipy", "image",
})


# The layer table's header row in docs/architecture.md.
LAYER_TABLE_HEADER = "| package | what it holds | imports |"


@dataclass(frozen=True)
class Module:
    name: str  # gradtape.ir.nodes
    path: str
    is_package: bool
    node: str  # gradtape.ir


@dataclass(frozen=True)
class Import:
    target: str  # the dotted name imported, maybe a name inside a module
    line: int
    is_from_list: bool  # `from X import name`: name may be a module or an attribute of X


def node_of(name: str) -> str:
    """gradtape.ir.nodes -> gradtape.ir; gradtape.custom -> gradtape.custom."""
    return ".".join(name.split(".")[:2])


def find_modules(src: str) -> dict[str, Module]:
    modules = {}
    for dirpath, _, files in os.walk(os.path.join(src, ROOT)):
        for file in sorted(files):
            if not file.endswith(".py"):
                continue
            path = os.path.join(dirpath, file)
            name = os.path.relpath(path, src)[:-3].replace(os.sep, ".")
            is_package = file == "__init__.py"
            if is_package:
                name = name.removesuffix(".__init__")
            modules[name] = Module(name, path, is_package, node_of(name))
    return modules


def imports_of(module: Module) -> Iterator[Import]:
    with open(module.path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    package = module.name.split(".") if module.is_package else module.name.split(".")[:-1]
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            for alias in n.names:
                yield Import(alias.name, n.lineno, False)
        elif isinstance(n, ast.ImportFrom):
            if n.level:
                base = package[: len(package) - (n.level - 1)]
                origin = ".".join(base + ([n.module] if n.module else []))
            else:
                origin = n.module or ""
            for alias in n.names:
                yield Import(origin + "." + alias.name, n.lineno, True)


def resolve(target: str, known: dict[str, Module]) -> str | None:
    """The module of ours that an import binds (its longest known prefix), or None."""
    while target and target not in known:
        target = target.rpartition(".")[0]
    return target if target.startswith(ROOT) else None


def analyse(modules: dict[str, Module]) -> tuple[dict[str, set[str]], list[str]]:
    """Edges between nodes (the root's own included), and the upward imports of the root
    (as file:line messages)."""
    edges: dict[str, set[str]] = {}
    root_imports: list[tuple[Module, Import]] = []
    for module in modules.values():
        for imp in imports_of(module):
            target = resolve(imp.target, modules)
            if target is None:
                continue
            if target == ROOT and module.name != ROOT:
                root_imports.append((module, imp))
                continue
            tnode = modules[target].node
            if tnode != module.node:
                edges.setdefault(module.node, set()).add(tnode)
    below_root = reachable(ROOT, edges)
    upward = [f"{module.path}:{imp.line}: {module.name} imports the package root "
              f"({imp.target})" for module, imp in root_imports if module.node in below_root]
    edges.pop(ROOT, None)  # the root imports everything: its edges are no cycle
    return edges, upward


def reachable(start: str, edges: dict[str, set[str]]) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        for w in edges.get(todo.pop(), ()):
            if w not in seen:
                seen.add(w)
                todo.append(w)
    return seen


def cycles(nodes: set[str], edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def strong(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            strong(v)
    return found


def oversized(modules: dict[str, Module], src: str, max_lines: int) -> list[str]:
    big = []
    for module in modules.values():
        with open(module.path, encoding="utf-8") as f:
            n = sum(1 for _ in f)
        if n > max_lines:
            big.append(f"{os.path.relpath(module.path, src)}:{n}")
    return big


def leaked_modules(src: str) -> tuple[list[str], bool]:
    """Public names of gradtape that are modules the docs don't promise (in a fresh
    interpreter, so the check sees what a user's import sees); and whether it ran."""
    code = (f"import types, {ROOT} as g\n"
            "bad = [n for n in dir(g) if not n.startswith('_')"
            " and isinstance(getattr(g, n), types.ModuleType)"
            f" and n not in {sorted(PUBLIC_MODULES)!r}]\n"
            "print(','.join(bad))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=src))
    if r.returncode != 0:
        print(r.stderr, file=sys.stderr)
    return [x for x in r.stdout.strip().split(",") if x], r.returncode == 0


def layer_rows(path: str) -> dict[str, set[str]]:
    """The layer table: package node -> the nodes its row allows it to import. A row's
    imports are backticked package names (``gradtape`` is the root), "everything above"
    (every package of the rows before it, plus any backticked names), or "nothing"."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    start = lines.index(LAYER_TABLE_HEADER) + 2  # after the header and its |---| line
    rows: dict[str, set[str]] = {}
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        package, imports = cells[0].strip("`/"), cells[-1]
        names = re.findall(r"`([a-z_]+)/?`", imports)
        allowed = {ROOT if n == ROOT else f"{ROOT}.{n}" for n in names}
        if imports.startswith("everything above"):
            allowed |= set(rows)
        rows[f"{ROOT}.{package}"] = allowed
    return rows


def layer_violations(modules: dict[str, Module], edges: dict[str, set[str]],
                     rows: dict[str, set[str]]) -> list[str]:
    packages = sorted({m.node for m in modules.values()
                       if m.is_package and m.name == m.node and m.node != ROOT})
    found = [f"{p} has no row in the layer table" for p in packages if p not in rows]
    for node in packages:
        for target in sorted(edges.get(node, ())):
            if node in rows and target not in rows[node] and target in rows:
                found.append(f"{node} imports {target}, which its row does not allow")
    return found


def flat_modules(modules: dict[str, Module]) -> list[str]:
    """Modules beside the packages that are neither the root's own nor public shims."""
    allowed = {f"{ROOT}.__main__"} | {f"{ROOT}.{n}" for n in PUBLIC_MODULES}
    return sorted(m.name for m in modules.values()
                  if not m.is_package and m.name.count(".") == 1 and m.name not in allowed)


def main(argv: list[str]) -> int:
    src = argv[1]
    max_lines = int(argv[argv.index("--max-lines") + 1]) if "--max-lines" in argv else 700
    default_layers = os.path.join(os.path.dirname(os.path.abspath(src)), "docs",
                                  "architecture.md")
    layers = argv[argv.index("--layers") + 1] if "--layers" in argv else default_layers
    modules = find_modules(src)
    edges, upward = analyse(modules)
    found = cycles({m.node for m in modules.values()}, edges)
    against_layers = (layer_violations(modules, edges, layer_rows(layers))
                      if os.path.exists(layers) else [])
    flat = flat_modules(modules)
    big = oversized(modules, src, max_lines)
    leaked, imported = leaked_modules(src)
    for component in found:
        print("cycle:", " -> ".join(component))
    for message in upward:
        print("upward import:", message)
    for message in against_layers:
        print("against the layer table:", message)
    for name in flat:
        print("flat module:", name, "(move it into the package its layer is)")
    print(f"cycles {len(found)}; upward imports of the package root: {len(upward)}; "
          f"imports against the layer table: {len(against_layers)}; "
          f"flat modules: {len(flat)}; "
          f"modules over {max_lines} lines: {len(big)} {' '.join(big)}; "
          f"leaked modules in gt namespace: {len(leaked)} {' '.join(leaked[:12])}")
    ok = (not found and not upward and not against_layers and not flat and not big
          and not leaked and imported)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
