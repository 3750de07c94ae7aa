"""The packages' import arrows run one way: api → console → cores, workers →
cores (+ console's models), and no core imports Django. Inside kafka/, each
package imports only those below it (KAFKA_LAYERS: client/ at the bottom
imports none), and the cores never import what only the apps need: the
records shown to people (kafka/inspect/) and the embedded broker
(kafka/embedded/).

Read from the source with ast (imports inside functions count: a lazy import
is an arrow too), so the check needs no import machinery and no new
dependency. The cores are kmq/, scheduler/, kafka/ and pipeline/: a service
that wants only the queue uses them as a library, without Django.
"""

import ast
import itertools
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "kmqadmin"
# metrics: the Prometheus exposition both sides build on; framework-free like a core.
CORES = {"kmq", "scheduler", "kafka", "pipeline", "metrics"}
APPS = {"api", "console", "sqs", "workers"}
# What the web framework side brings; a core may import none of it.
FRAMEWORKS = {"django", "rest_framework", "drf_spectacular", "channels", "celery", "daphne"}
# The modules of another app that api and workers may use; cores may use any core.
ALLOWED = {
    "api": ("console.services", "console.models", "console.validators"),
    "workers": ("console.models",),
    "sqs": ("console.services", "console.models", "console.validators"),
    "console": (),
}
# kafka/'s packages, bottom first, and the others of them each may import.
KAFKA_LAYERS = {
    "client": (),
    "protocol": ("client",),
    "admin": ("client", "protocol"),
    "ownership": ("client", "admin"),
    "share_consumer": ("client", "protocol"),
    "inspect": ("client", "admin"),
    "embedded": ("client", "admin"),
}
# What only the apps need: the records shown to people and the embedded broker.
APPS_ONLY = ("kafka.inspect", "kafka.embedded")
# The cores that must run without them (kafka itself holds them).
WITHOUT_APPS_ONLY = {"kmq", "scheduler", "pipeline"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(path: Path) -> Iterator[tuple[str, int]]:
    """Every module ``path`` imports, absolute, with the line that imports it.
    ``from a import b`` yields ``a.b`` too: b may be a submodule."""
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
            yield base, node.lineno
            for alias in node.names:
                yield f"{base}.{alias.name}", node.lineno


def arrows() -> list[tuple[str, str, str]]:
    """(importing package, imported kmqadmin module or top-level library, where)."""
    found = []
    for path in sorted((ROOT / PACKAGE).rglob("*.py")):
        parts = module_name(path).split(".")
        if len(parts) < 2 or parts[1] not in CORES | APPS:
            continue  # the project's own wiring: settings, urls, asgi, celery
        for imported, line in imports(path):
            where = f"{path.relative_to(ROOT)}:{line}"
            if imported.startswith(f"{PACKAGE}."):
                found.append((parts[1], imported.removeprefix(f"{PACKAGE}."), where))
            else:
                found.append((parts[1], imported.split(".")[0], where))
    return found


def kafka_arrows() -> list[tuple[str, str, str]]:
    """(kafka/ package importing, kmqadmin.kafka module it imports, where);
    a module at kafka/'s root is the package "" (it belongs in one)."""
    found = []
    for path in sorted((ROOT / PACKAGE / "kafka").rglob("*.py")):
        parts = module_name(path).split(".")
        if len(parts) == 2:
            continue  # kafka/__init__.py: the map of the packages, no code
        source = parts[2] if len(parts) > 3 or path.name == "__init__.py" else ""
        for imported, line in imports(path):
            where = f"{path.relative_to(ROOT)}:{line}"
            if imported.startswith(f"{PACKAGE}.kafka."):
                found.append((source, imported.removeprefix(f"{PACKAGE}."), where))
    return found


def kafka_layer_violations(found: Iterable[tuple[str, str, str]]) -> list[str]:
    """The arrows between kafka/'s packages that KAFKA_LAYERS does not allow."""
    return [
        f"{where} imports {imported}"
        for source, imported, where in found
        if (target := imported.split(".")[1]) != source
        and target not in KAFKA_LAYERS.get(source, ())
    ]


def apps_only_violations(found: Iterable[tuple[str, str, str]]) -> list[str]:
    """The arrows from a core of WITHOUT_APPS_ONLY into APPS_ONLY."""
    return [
        f"{where} imports {imported}"
        for source, imported, where in found
        if source in WITHOUT_APPS_ONLY
        and any(imported == only or imported.startswith(f"{only}.") for only in APPS_ONLY)
    ]


def package_graph() -> dict[str, dict[str, str]]:
    """Package → package it imports → one place that does (for the message)."""
    graph: dict[str, dict[str, str]] = {p: {} for p in CORES | APPS}
    for source, imported, where in arrows():
        target = imported.split(".")[0]
        if target in graph and target != source:
            graph[source].setdefault(target, where)
    return graph


def cycle(graph: dict[str, dict[str, str]]) -> list[str] | None:
    """One cycle of ``graph`` as a path that returns to its start, or None."""
    done: set[str] = set()

    def visit(node: str, path: list[str]) -> list[str] | None:
        if node in path:
            return [*path[path.index(node) :], node]
        if node in done:
            return None
        for target in sorted(graph[node]):
            if (found := visit(target, [*path, node])) is not None:
                return found
        done.add(node)
        return None

    return next((c for node in sorted(graph) if (c := visit(node, [])) is not None), None)


def test_the_packages_import_each_other_without_a_cycle() -> None:
    graph = package_graph()
    found = cycle(graph)
    assert found is None, (
        " → ".join(found) + ": " + ", ".join(graph[a][b] for a, b in itertools.pairwise(found))
    )


def test_no_core_imports_django_or_an_app() -> None:
    wrong = [
        f"{where} imports {imported}"
        for source, imported, where in arrows()
        if source in CORES and imported.split(".")[0] in FRAMEWORKS | APPS | {"settings"}
    ]
    assert wrong == []


@pytest.mark.parametrize("app", sorted(ALLOWED))
def test_an_app_reaches_into_another_only_through_its_service_layer(app: str) -> None:
    wrong = [
        f"{where} imports {imported}"
        for source, imported, where in arrows()
        if source == app
        and imported.split(".")[0] in APPS - {app}
        and not any(
            imported == allowed or imported.startswith(f"{allowed}.") for allowed in ALLOWED[app]
        )
        # "from kmqadmin.console import services" names the allowed package itself.
        and imported not in {allowed.rpartition(".")[0] for allowed in ALLOWED[app]}
    ]
    assert wrong == []


def test_the_cores_never_import_the_records_shown_to_people_or_the_embedded_broker() -> None:
    assert apps_only_violations(arrows()) == []


def test_each_kafka_package_imports_only_the_packages_below_it() -> None:
    assert kafka_layer_violations(kafka_arrows()) == []


def test_every_kafka_module_lives_in_a_package_with_a_place_in_the_layers() -> None:
    kafka = ROOT / PACKAGE / "kafka"
    packages = {p.parent.name for p in kafka.glob("*/__init__.py")}
    loose = sorted(p.name for p in kafka.glob("*.py") if p.name != "__init__.py")
    assert (sorted(packages ^ KAFKA_LAYERS.keys()), loose) == ([], [])


def test_the_kafka_checks_find_a_wrong_arrow() -> None:
    """The checks above pass on the real tree; this proves they could fail."""
    found = [
        ("client", "kafka.admin.topics", "a.py:1"),
        ("client", "kafka.client.config", "b.py:2"),
        ("inspect", "kafka.admin.stretch", "c.py:3"),
        ("", "kafka.client.config", "d.py:4"),
    ]
    assert kafka_layer_violations(found) == [
        "a.py:1 imports kafka.admin.topics",
        "d.py:4 imports kafka.client.config",
    ]
    found = [
        ("kmq", "kafka.inspect.browse", "e.py:5"),
        ("scheduler", "kafka.embedded", "f.py:6"),
        ("pipeline", "kafka.inspection", "g.py:7"),
        ("console", "kafka.inspect.tail", "h.py:8"),
    ]
    assert apps_only_violations(found) == [
        "e.py:5 imports kafka.inspect.browse",
        "f.py:6 imports kafka.embedded",
    ]


def test_the_cycle_finder_finds_a_cycle() -> None:
    """The checks above pass on a clean graph; this one proves they could fail."""
    graph = {"api": {"console": "x"}, "console": {"workers": "y"}, "workers": {"console": "z"}}
    assert cycle(graph) == ["console", "workers", "console"]
    assert cycle({"api": {"console": "x"}, "console": {}}) is None
