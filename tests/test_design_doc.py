"""docs/ is the design a maintainer reads, so it cannot drift from the code:
every kmqadmin/ path and test it names exists, and architecture.md's Layout
lists every package; the marker table of docs/wire.md is MarkerType's, byte
for byte; its header tables name exactly the header constants of the code;
docs/data.md names every SQL model, docs/processes.md every `kmq`
subcommand; every link of the README and of docs/ leads to a file. Each
check fails when either side changes without the other."""

import ast
import re
from pathlib import Path

import pytest
from django.apps import apps

from kmqadmin.console.management.commands.kmq import SUBCOMMANDS
from kmqadmin.kmq import markers
from kmqadmin.kmq.markers import MarkerType
from tests.test_architecture_doc import ROOT, mentioned

DOCS = ROOT / "docs"
WIRE = DOCS / "wire.md"
README = ROOT / "README.md"
# A row of the marker table: | 0x05 | START_RANGE | 17: type, ... | meaning |
MARKER_ROW = re.compile(r"^\| (0x[0-9a-f]{2}) \| (\w+) \| (\d+)(?: \+ n)?:", re.MULTILINE)
# A row of a header table: | `kmq-id` | value | written by |
HEADER_ROW = re.compile(r"^\| `([\w-]+)` \|", re.MULTILINE)
# A header name in the code: the namespaces kmqadmin writes its headers in
# (a bare prefix such as "kmq-" is not a header).
HEADER_NAME = re.compile(r"(?:kmq|scheduler|sqs)-[a-z]+(?:-[a-z]+)*")
# A test as the docs name one: tests/kmq/test_crashes.py::test_kill_9_...
TEST = re.compile(r"\btests/[\w/.-]+?\.py(?:::\w+)?")
# A relative Markdown link: [text](docs/wire.md#markers), ![](docs/dlq.png)
LINK = re.compile(r"\]\((?!https?:|#|mailto:)([^)#\s]+)(?:#[^)]*)?\)")

# One encoding of each marker kind, with no optional bytes (REJECT's reason).
SAMPLES = {
    MarkerType.END: markers.END,
    MarkerType.START: markers.start(30_000),
    MarkerType.REDELIVER_NOW: markers.REDELIVER_NOW,
    MarkerType.EXTEND: markers.extend(1_700_000_000_000),
    MarkerType.REJECT: markers.reject(""),
    MarkerType.START_RANGE: markers.start_range(30_000, 757),
    MarkerType.END_RANGE: markers.end_range(757),
    MarkerType.RETURN: markers.RETURN,
}


def pages() -> list[Path]:
    return sorted(DOCS.glob("*.md"))


def docs_text() -> str:
    return "\n".join(page.read_text() for page in pages())


def section(text: str, title: str) -> str:
    """The body of the ``## title`` section of a Markdown page."""
    found = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.MULTILINE | re.DOTALL)
    assert found, f"no section {title!r}"
    return found[1]


def marker_table(text: str) -> dict[str, tuple[int, int]]:
    """Each marker kind of the table: name -> (type byte, value bytes)."""
    return {name: (int(byte, 16), int(size)) for byte, name, size in MARKER_ROW.findall(text)}


def header_names(text: str) -> set[str]:
    """The headers the header tables of ``text``'s Headers section list."""
    return set(HEADER_ROW.findall(section(text, "Headers")))


def code_headers(root: Path) -> dict[str, str]:
    """Every module-level string constant under ``root`` that is a header
    name (HEADER_NAME), with where it is: header -> module:constant."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        for node in ast.parse(path.read_text()).body:
            if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)):
                continue
            value = node.value.value
            if isinstance(value, str) and HEADER_NAME.fullmatch(value):
                names = ",".join(t.id for t in node.targets if isinstance(t, ast.Name))
                found[value] = f"{path.relative_to(ROOT)}:{names}"
    return found


def test_every_path_the_docs_name_exists() -> None:
    named = mentioned(docs_text())
    assert named  # the reader found paths: the check below can fail
    assert sorted(path for path in named if not (ROOT / path).exists()) == []


def test_every_package_is_in_the_layout() -> None:
    named = mentioned(section((DOCS / "architecture.md").read_text(), "Layout"))
    found = sorted(
        f"{path.parent.relative_to(ROOT).as_posix()}/"
        for path in (ROOT / "kmqadmin").rglob("__init__.py")
        if path.parent != ROOT / "kmqadmin"
    )
    assert "kmqadmin/kafka/client/security/" in found  # the walk goes all the way down
    assert [package for package in found if package not in named] == []


def test_the_marker_table_is_marker_types() -> None:
    table = marker_table(section(WIRE.read_text(), "Markers (kmq backend)"))
    kinds = {kind.name: kind.value for kind in MarkerType}
    assert {name: byte for name, (byte, _) in table.items()} == kinds
    assert SAMPLES.keys() == set(MarkerType)  # a new kind needs a sample here
    sizes = {kind.name: len(value) for kind, value in SAMPLES.items()}
    assert {name: size for name, (_, size) in table.items()} == sizes
    assert all(value[0] == kind for kind, value in SAMPLES.items())


@pytest.mark.parametrize(
    ("label", "value"),
    [
        ("key", markers.encode_key(3, 258)),
        ("START_RANGE", markers.start_range(30_000, 757)),
        ("END_RANGE", markers.end_range(757)),
    ],
)
def test_the_byte_by_byte_vectors_are_the_codecs(label: str, value: bytes) -> None:
    line = re.search(rf"^{label} +([0-9a-f |]+)$", WIRE.read_text(), re.MULTILINE)
    assert line, f"no {label} line in docs/wire.md"
    assert bytes.fromhex(line[1].replace("|", "")) == value


def test_the_header_tables_name_every_header_of_the_code() -> None:
    in_code = code_headers(ROOT / "kmqadmin")
    assert "kmq-id" in in_code and "sqs-message-group-id" in in_code  # the scan finds them
    documented = header_names(WIRE.read_text())
    assert sorted(documented - in_code.keys()) == []  # documented, gone from the code
    assert {h: where for h, where in in_code.items() if h not in documented} == {}


def test_the_readers_fail_on_a_page_that_drifted() -> None:
    """The checks above pass on the real pages; this proves they read them right."""
    text = "## Headers\n\n| `kmq-id` | id |\n| `kmq-gone` | x |\n\n## Next\n| `kmq-other` | y |\n"
    assert header_names(text) == {"kmq-id", "kmq-gone"}
    table = "| 0x00 | END | 1: type | acked |\n| 0x04 | REJECT | 1 + n: type, reason | dlq |\n"
    assert marker_table(table) == {"END": (0, 1), "REJECT": (4, 1)}
    assert TEST.findall("`tests/kmq/test_queue.py::test_a` and tests/test_run.py.") == [
        "tests/kmq/test_queue.py::test_a",
        "tests/test_run.py",
    ]
    assert LINK.findall("[a](docs/wire.md#markers) ![b](docs/x.png) [c](https://x.org/y)") == [
        "docs/wire.md",
        "docs/x.png",
    ]


def defines(test: str) -> bool:
    """Whether ``test`` (a file, or file::function) is in the tree."""
    path, _, name = test.partition("::")
    if not (ROOT / path).is_file():
        return False
    defined = re.compile(rf"^(?:async )?def {name}\(", re.MULTILINE)
    return not name or defined.search((ROOT / path).read_text()) is not None


def test_every_test_the_docs_name_exists() -> None:
    named = set(TEST.findall(docs_text()))
    assert any("::" in test for test in named)  # the promises name tests: the check can fail
    assert sorted(test for test in named if not defines(test)) == []
    assert not defines("tests/kmq/test_queue.py::test_gone")


def test_the_data_page_names_every_sql_model() -> None:
    models = [model.__name__ for model in apps.get_app_config("console").get_models()]
    assert "Queue" in models
    text = (DOCS / "data.md").read_text()
    assert [name for name in models if f"`{name}`" not in text] == []


def test_the_processes_page_names_every_kmq_subcommand() -> None:
    text = section((DOCS / "processes.md").read_text(), "`kmq run` and the other commands")
    assert [name for name in SUBCOMMANDS if f"- `{name}`:" not in text] == []


@pytest.mark.parametrize("page", [README, *pages()], ids=lambda page: page.name)
def test_every_link_leads_to_a_file(page: Path) -> None:
    broken = [link for link in LINK.findall(page.read_text()) if not (page.parent / link).exists()]
    assert broken == []


def test_the_readme_is_a_front_page() -> None:
    """The design is in docs/; the README is the way in, short enough to read."""
    assert len(README.read_text().splitlines()) < 250
