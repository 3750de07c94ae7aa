"""kmqadmin/'s modules and the arrows between them, for tests/test_import_graph.py:
what it checks of the shape of the code (a folder's size, a module's length,
no cycle between modules or between the units of a package, console's layers),
as functions of their input, so a test can show each finds what it should.

An arrow runs from a module to a kmqadmin module it imports, wherever the
import is (a lazy import is an arrow too); ``from a import b`` is an arrow to
a.b when b is a module, else to a. Migrations are left out: Django writes them.
"""

import ast
import itertools
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "kmqadmin"
MAX_ROOT_MODULES = 15
MAX_LINES = 400
# console's units, bottom first: each imports only from its own rank or below.
CONSOLE_LAYERS = [
    {"validators"},
    {"models"},
    {"templatetags"},
    {"services"},
    {"forms"},
    {"oidc"},
    {"views", "live"},
    {"urls"},
]

Graph = Mapping[str, Mapping[str, str]]  # module → module it imports → where


def sources() -> list[Path]:
    """Every module of kmqadmin/ but the migrations."""
    return [
        path
        for path in sorted((ROOT / PACKAGE).rglob("*.py"))
        if "migrations" not in path.relative_to(ROOT).parts
    ]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def crowded_folders(paths: Iterable[Path]) -> list[str]:
    """Folders holding more than MAX_ROOT_MODULES modules at their root
    (``__init__.py`` not counted), each with its count."""
    counts: dict[Path, int] = {}
    for path in paths:
        if path.name != "__init__.py":
            counts[path.parent] = counts.get(path.parent, 0) + 1
    return [
        f"{folder.relative_to(ROOT)}/: {count} modules"
        for folder, count in sorted(counts.items())
        if count > MAX_ROOT_MODULES
    ]


def long_modules(lengths: Mapping[Path, int]) -> list[str]:
    """Modules over MAX_LINES lines, each with its length."""
    return [
        f"{path.relative_to(ROOT)}: {lines} lines"
        for path, lines in sorted(lengths.items())
        if lines > MAX_LINES
    ]


def module_graph(paths: Iterable[Path]) -> dict[str, dict[str, str]]:
    """Module → kmqadmin module it imports → the first line that does."""
    paths = list(paths)
    known = {module_name(path) for path in paths}
    graph: dict[str, dict[str, str]] = {}
    for path in paths:
        name = module_name(path)
        graph[name] = {}
        for target, line in imports(path):
            if target in known and target != name:
                graph[name].setdefault(target, f"{path.relative_to(ROOT)}:{line}")
    return graph


def imports(path: Path) -> Iterator[tuple[str, int]]:
    """Every module ``path`` imports, absolute, with the line that imports it.
    ``from a import b`` yields ``a.b`` when b is a module of this tree, and
    ``a`` when some name it takes is not (a library's, or a package's own)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            named = [f"{base}.{alias.name}" for alias in node.names]
            modules = [one for one in named if _is_module(one)]
            if len(modules) < len(named):
                yield base, node.lineno
            yield from ((one, node.lineno) for one in modules)


def _is_module(name: str) -> bool:
    where = ROOT.joinpath(*name.split("."))
    return where.with_suffix(".py").is_file() or (where / "__init__.py").is_file()


def cycles(graph: Graph) -> list[str]:
    """Each group of nodes that reach one another (Tarjan), as one cycle
    through it with the place of each arrow."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph.get(node, {})):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while not group or group[-1] != node:
                group.append(stack.pop())
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return [_described(graph, _cycle_in(graph, set(group))) for group in groups]


def _cycle_in(graph: Graph, group: set[str]) -> list[str]:
    """A path from the group's first node back to it, inside the group."""
    start = min(group)
    paths = {start: [start]}
    todo = [start]
    while todo:
        node = todo.pop(0)
        for target in sorted(set(graph.get(node, {})) & group):
            if target == start:
                return [*paths[node], start]
            if target not in paths:
                paths[target] = [*paths[node], target]
                todo.append(target)
    raise AssertionError(f"no cycle through {start}")


def _described(graph: Graph, path: list[str]) -> str:
    wheres = ", ".join(graph[a][b] for a, b in itertools.pairwise(path))
    return f"{' → '.join(path)} ({wheres})"


def packages(graph: Graph) -> list[str]:
    """Every package: a module others live inside."""
    return sorted({name.rpartition(".")[0] for name in graph if "." in name})


def unit_graph(graph: Graph, package: str) -> dict[str, dict[str, str]]:
    """The units of ``package`` (its subpackages and root modules, by
    name) → the units they import, from any module inside one to any inside
    another; the package's own ``__init__`` is none of them."""
    units: dict[str, dict[str, str]] = {}
    for source, targets in graph.items():
        if (unit := _unit(source, package)) is None:
            continue
        units.setdefault(unit, {})
        for target, where in targets.items():
            if (other := _unit(target, package)) is not None and other != unit:
                units[unit].setdefault(other, where)
    return units


def _unit(module: str, package: str) -> str | None:
    if not module.startswith(f"{package}."):
        return None
    return module.removeprefix(f"{package}.").split(".")[0]


def layer_violations(graph: Graph, package: str, layers: list[set[str]]) -> list[str]:
    """Every import, inside ``package``, from a unit of ``layers`` up to a
    unit of a higher layer."""
    rank = {unit: i for i, layer in enumerate(layers) for unit in layer}
    return [
        f"{where}: {source} imports {target}, above it"
        for source, targets in sorted(graph.items())
        for target, where in sorted(targets.items())
        if (low := rank.get(_unit(source, package) or "")) is not None
        and (high := rank.get(_unit(target, package) or "")) is not None
        and high > low
    ]
