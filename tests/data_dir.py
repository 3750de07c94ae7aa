"""The suite's own data dir: tests never leave jobs or files in the developer's.

Django's settings create the data dir and write into it on import (the
secret key, Celery's filesystem queue, where a job a test enqueues without
a worker stays, for the developer's next `make run` to execute). The suite's
settings (tests/settings.py) import this first, so KMQ_DATA_DIR points at a
temporary dir before the product's settings read it; subprocesses inherit
it. The guard (a plugin of tests/conftest.py) fails the session if the
developer's data dir changed anyway.

PYTEST_DONT_REWRITE: the settings import this before pytest could rewrite it.
"""

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# The dir `make run` uses: KMQ_DATA_DIR as the developer set it, else
# settings.py's default.
# pytest-xdist's workers inherit the controller's environment, where
# KMQ_DATA_DIR already names the controller's dir: the first process keeps
# the developer's for all of them.
_DEVELOPERS = "KMQ_TESTS_DEVELOPERS_DATA_DIR"
DEVELOPERS = Path(
    os.environ.get(_DEVELOPERS) or os.environ.get("KMQ_DATA_DIR") or ROOT / "var"
).resolve()
os.environ[_DEVELOPERS] = str(DEVELOPERS)
SUITE = Path(tempfile.mkdtemp(prefix="kmq-tests-data-"))
os.environ["KMQ_DATA_DIR"] = str(SUITE)

Snapshot = dict[str, tuple[int, int]]


def snapshot(folder: Path) -> Snapshot:
    """Every file under ``folder``: (size, modification time in ns)."""
    found: Snapshot = {}
    for path in folder.rglob("*") if folder.is_dir() else ():
        if path.is_file():
            stat = path.stat()
            found[str(path.relative_to(folder))] = (stat.st_size, stat.st_mtime_ns)
    return found


def changed(before: Snapshot, after: Snapshot) -> list[str]:
    """Files added, removed or rewritten between two snapshots."""
    return sorted(
        name for name in before.keys() | after.keys() if before.get(name) != after.get(name)
    )


@pytest.fixture(scope="session", autouse=True)
def developers_data_dir_untouched() -> Iterator[None]:
    before = snapshot(DEVELOPERS)
    yield
    written = changed(before, snapshot(DEVELOPERS))
    assert not written, (
        f"the suite wrote into the developer's data dir {DEVELOPERS}: {', '.join(written[:10])}"
    )


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(SUITE, ignore_errors=True)
