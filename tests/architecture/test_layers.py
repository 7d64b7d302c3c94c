"""The layout is the architecture: checked on the source, so a change that breaks it fails here.

- every module's imports of the project (module level *and* inside functions) form no cycle;
- each layer imports only the layers below it (LAYERS, bottom first);
- no module is over 800 lines;
- the top of ``hive_bridge/`` holds only its foundations (TOP_MODULES); everything else lives in a room (a package);
- no private name (leading underscore) is imported from another module;
- nothing in the product imports the test encoders and writers (``hive_bridge.testing``), but for one stated
  exception: ``hive-bridge demo`` builds its sample table with the test writer (hive-bridge reads tables Hudi
  wrote; it has no writer of its own to offer).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("sarg", "hive_bridge")
MAX_LINES = 800
#: the only modules at the top of hive_bridge/: the package, its command entry and the lowest layer
TOP_MODULES = {"__init__.py", "__main__.py", "errors.py", "config.py", "redaction.py", "py.typed"}
#: (importer, imported) pairs allowed to cross the rules above, each with its reason in the module docstring
EXCEPTIONS = {("hive_bridge.app.demo", "hive_bridge.testing.sample_table")}

#: bottom first; a module may import its own layer and the layers before it. A layer is a module or package
#: prefix; the longest matching prefix decides.
LAYERS: list[tuple[str, ...]] = [
    ("sarg",),
    ("hive_bridge.errors", "hive_bridge.config", "hive_bridge.redaction"),
    ("hive_bridge.storage",),
    ("hive_bridge.formats",),
    ("hive_bridge.layout",),
    ("hive_bridge.mdt",),
    ("hive_bridge.table",),
    ("hive_bridge.stats",),
    ("hive_bridge.filters",),
    ("hive_bridge.pruning",),
    ("hive_bridge.hive",),
    ("hive_bridge.spark",),
    ("hive_bridge.workload",),
    ("hive_bridge.advisor",),
    ("hive_bridge.app", "hive_bridge.__main__", "hive_bridge"),
    ("hive_bridge.testing",),
]


def _modules() -> Iterator[tuple[str, Path]]:
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            rel = path.relative_to(ROOT).with_suffix("")
            parts = list(rel.parts)
            if parts[-1] == "__init__":
                parts.pop()
            yield ".".join(parts), path


MODULES = dict(_modules())


def _layer(module: str) -> int:
    best, level = -1, -1
    for i, prefixes in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best:
                best, level = len(p), i
    assert level >= 0, f"{module} is in no layer: add it to LAYERS"
    return level


def _resolve(module: str, name: str | None) -> str:
    """The project module an import names (``from pkg import mod`` names the submodule)."""
    if name and f"{module}.{name}" in MODULES:
        return f"{module}.{name}"
    return module


def _imports(module: str, path: Path) -> Iterator[tuple[str, str | None, int]]:
    """(imported project module, imported name or None, line) of every import, at any depth."""
    tree = ast.parse(path.read_text(), str(path))
    is_pkg = path.name == "__init__.py"
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] in PACKAGES:
                    yield a.name, None, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = module.split(".") if is_pkg else module.split(".")[:-1]
                pkg = pkg[: len(pkg) - node.level + 1]
                base = ".".join(pkg + ([base] if base else []))
            if base.split(".")[0] not in PACKAGES:
                continue
            for a in node.names:
                yield _resolve(base, a.name), a.name, node.lineno


GRAPH: dict[str, set[str]] = {m: set() for m in MODULES}
EDGES: list[tuple[str, str, str | None, int]] = []
for _m, _p in MODULES.items():
    for _target, _name, _line in _imports(_m, _p):
        if _target in MODULES and _target != _m:
            GRAPH[_m].add(_target)
        EDGES.append((_m, _target, _name, _line))


def test_no_import_cycle() -> None:
    # a package's __init__ re-exporting its own modules is not a cycle of the code's layers
    graph = {m: {t for t in ts if not (MODULES[m].name == "__init__.py" and t.startswith(m + "."))}
             for m, ts in GRAPH.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    cycles: list[list[str]] = []
    counter = [0]

    def strong(v: str) -> None:     # Tarjan's strongly connected components
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                strong(w)
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
                cycles.append(sorted(comp))

    for v in graph:
        if v not in index:
            strong(v)
    assert not cycles, f"import cycles: {cycles}"


def test_layers_import_only_below() -> None:
    wrong = [f"{m}:{line} imports {t} (layer {_layer(t)} above {_layer(m)})"
             for m, t, _n, line in EDGES if _layer(t) > _layer(m) and (m, t) not in EXCEPTIONS]
    assert not wrong, "\n".join(wrong)


def test_product_never_imports_testing() -> None:
    wrong = [f"{m}:{line} imports {t}" for m, t, _n, line in EDGES
             if t.startswith("hive_bridge.testing") and not m.startswith("hive_bridge.testing")
             and (m, t) not in EXCEPTIONS]
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_module_size(module: str) -> None:
    lines = MODULES[module].read_text().count("\n")
    assert lines <= MAX_LINES, f"{MODULES[module]} has {lines} lines (at most {MAX_LINES})"


def test_no_private_name_imported_across_modules() -> None:
    wrong = [f"{m}:{line} imports {n} from {t}" for m, t, n, line in EDGES
             if n and n.startswith("_") and not n.startswith("__") and t != m]
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("package", sorted(m for m, p in MODULES.items() if p.name == "__init__.py"
                                          and m != "hive_bridge.testing.__main__"))
def test_each_package_says_what_it_holds_and_exports_its_names(package: str) -> None:
    tree = ast.parse(MODULES[package].read_text())
    doc = ast.get_docstring(tree)
    assert doc and len(doc.split()) >= 15, f"{package}: its __init__ needs a paragraph saying what it holds"
    exported = [n for n in ast.walk(tree) if isinstance(n, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == "__all__" for t in n.targets)]
    assert exported, f"{package}: its __init__ exports no public names (__all__)"


def test_top_of_the_package_holds_only_its_foundations() -> None:
    loose = sorted(p.name for p in (ROOT / "hive_bridge").iterdir() if p.is_file() and p.name not in TOP_MODULES)
    assert not loose, f"modules at the top of hive_bridge/ belong in a room: {loose}"
