"""docs/architecture.md cannot drift from the tree: every kmqadmin/ path it
names exists, and every package of kmqadmin/ and of kmqadmin/kafka/ is in it,
so a package moved, renamed or added fails here until the map says so; and
the partition owners stay within the size the doc sets them."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "architecture.md"
# A path as the doc writes one: kmqadmin/kmq/client/queue_client.py, kmqadmin/kafka/admin/.
PATH = re.compile(r"\bkmqadmin(?:/[\w.-]+)+/?")


def mentioned(text: str) -> set[str]:
    """Every kmqadmin/... path in ``text``, a sentence's full stop left off."""
    return {match.removesuffix(".") for match in PATH.findall(text)}


def packages(folder: Path) -> list[str]:
    """The packages directly in ``folder``, as the doc writes them."""
    return sorted(
        f"{path.parent.relative_to(ROOT).as_posix()}/" for path in folder.glob("*/__init__.py")
    )


def test_every_path_the_doc_names_exists() -> None:
    missing = sorted(path for path in mentioned(DOC.read_text()) if not (ROOT / path).exists())
    assert missing == []


@pytest.mark.parametrize("folder", ["kmqadmin", "kmqadmin/kafka"])
def test_every_package_is_in_the_doc(folder: str) -> None:
    named = mentioned(DOC.read_text())
    found = packages(ROOT / folder)
    assert found  # the glob found the packages: the check below can fail
    assert [package for package in found if package not in named] == []


@pytest.mark.parametrize(
    "owner",
    [
        "kmqadmin/kafka/ownership/partition_owner.py",
        "kmqadmin/kmq/tracking/tracker.py",
        "kmqadmin/scheduler/scheduler.py",
    ],
)
def test_each_partition_owner_stays_under_250_lines(owner: str) -> None:
    assert len((ROOT / owner).read_text().splitlines()) < 250


def test_the_path_reader_reads_paths_as_the_doc_writes_them() -> None:
    """The checks above pass on the real doc; this proves they read it right."""
    text = "See `kmqadmin/kmq/client/queue_client.py`, kmqadmin/kafka/admin/ and kmqadmin/gone.py."
    assert mentioned(text) == {
        "kmqadmin/kmq/client/queue_client.py",
        "kmqadmin/kafka/admin/",
        "kmqadmin/gone.py",
    }
    assert not (ROOT / "kmqadmin/gone.py").exists()
