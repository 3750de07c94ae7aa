"""The packages' import arrows run one way: api → console → cores, workers →
cores (+ console's models), and no core imports Django. Inside kafka/, each
package imports only those below it (KAFKA_LAYERS: client/ at the bottom
imports none), and the cores never import what only the apps need: the
records shown to people (kafka/inspect/) and the embedded broker
(kafka/embedded/).

Inside the package, tests/module_graph.py keeps the shape: no folder root
over 15 modules, no module over 400 lines, no cycle between modules nor
between the units (subpackages and root modules) of any package, and
console's layers (models below services below forms below views) never
imported upwards.

Read from the source with ast (imports inside functions count: a lazy import
is an arrow too), so the check needs no import machinery and no new
dependency. The cores are kmq/, scheduler/, kafka/ and pipeline/: a service
that wants only the queue uses them as a library, without Django.
"""

from collections.abc import Iterable

import pytest

from tests import module_graph as mg

ROOT, PACKAGE = mg.ROOT, mg.PACKAGE
# metrics: the Prometheus exposition both sides build on; framework-free like a core.
CORES = {"kmq", "scheduler", "kafka", "pipeline", "metrics"}
APPS = {"api", "console", "sqs", "workers"}
# What the web framework side brings; a core may import none of it.
FRAMEWORKS = {"django", "rest_framework", "drf_spectacular", "channels", "celery"}
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


def arrows() -> list[tuple[str, str, str]]:
    """(importing package, imported kmqadmin module or top-level library, where)."""
    found = []
    for path in sorted((ROOT / PACKAGE).rglob("*.py")):
        parts = mg.module_name(path).split(".")
        if len(parts) < 2 or parts[1] not in CORES | APPS:
            continue  # the project's own wiring: settings, urls, asgi, celery
        for imported, line in mg.imports(path):
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
        parts = mg.module_name(path).split(".")
        if len(parts) == 2:
            continue  # kafka/__init__.py: the map of the packages, no code
        source = parts[2] if len(parts) > 3 or path.name == "__init__.py" else ""
        for imported, line in mg.imports(path):
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


def test_the_packages_import_each_other_without_a_cycle() -> None:
    assert mg.cycles(package_graph()) == []


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
    assert mg.cycles(graph) == ["console → workers → console (y, z)"]
    assert mg.cycles({"api": {"console": "x"}, "console": {}}) == []


def test_no_folder_holds_more_than_15_modules_at_its_root() -> None:
    assert mg.crowded_folders(mg.sources()) == []


def test_no_module_is_over_400_lines() -> None:
    lengths = {path: len(path.read_text().splitlines()) for path in mg.sources()}
    assert mg.long_modules(lengths) == []


def test_no_module_imports_itself_through_others() -> None:
    assert mg.cycles(mg.module_graph(mg.sources())) == []


def test_no_package_has_a_cycle_between_its_units() -> None:
    graph = mg.module_graph(mg.sources())
    found = [
        f"{package}: {found}"
        for package in mg.packages(graph)
        for found in mg.cycles(mg.unit_graph(graph, package))
    ]
    assert found == []


def test_console_imports_nothing_from_a_layer_above() -> None:
    graph = mg.module_graph(mg.sources())
    assert mg.layer_violations(graph, f"{PACKAGE}.console", mg.CONSOLE_LAYERS) == []


def test_the_shape_checks_find_what_they_should() -> None:
    """The checks above pass on the real tree; this proves they could fail."""
    crowded = [ROOT / "kmqadmin/x" / f"m{i}.py" for i in range(16)]
    fine = [ROOT / "kmqadmin/y" / f"m{i}.py" for i in range(15)] + [ROOT / "kmqadmin/y/__init__.py"]
    assert mg.crowded_folders(crowded + fine) == ["kmqadmin/x/: 16 modules"]
    lengths = {ROOT / "kmqadmin/a.py": 401, ROOT / "kmqadmin/b.py": 400}
    assert mg.long_modules(lengths) == ["kmqadmin/a.py: 401 lines"]
    graph = {
        "k.console.services.jobs": {"k.console.services.letters": "j.py:1"},
        "k.console.services.letters": {"k.console.services.jobs": "l.py:2"},
        "k.console.models.queues": {"k.console.services.jobs": "q.py:3"},
        "k.console.forms.reset": {"k.console.models.queues": "r.py:4"},
    }
    assert mg.cycles(graph) == [
        "k.console.services.jobs → k.console.services.letters → k.console.services.jobs "
        "(j.py:1, l.py:2)"
    ]
    units = mg.unit_graph(graph, "k.console")
    assert units == {
        "services": {},
        "models": {"services": "q.py:3"},
        "forms": {"models": "r.py:4"},
    }
    assert mg.cycles(mg.unit_graph(graph, "k.console.services")) == [
        "jobs → letters → jobs (j.py:1, l.py:2)"
    ]
    assert mg.layer_violations(graph, "k.console", mg.CONSOLE_LAYERS) == [
        "q.py:3: k.console.models.queues imports k.console.services.jobs, above it"
    ]
