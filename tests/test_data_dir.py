"""The suite never writes into the developer's data dir (tests/data_dir.py)."""

import subprocess
import sys

from django.conf import settings

from tests import data_dir
from tests.process import ROOT, env


def test_the_suite_runs_on_a_data_dir_of_its_own() -> None:
    assert settings.DATA_DIR.resolve() == data_dir.SUITE.resolve()
    assert data_dir.DEVELOPERS not in settings.DATA_DIR.resolve().parents
    assert settings.CELERY_BROKER_TRANSPORT_OPTIONS["data_folder_in"].startswith(
        str(data_dir.SUITE)
    )  # where a job enqueued without a worker waits
    # the product's processes the tests start: its settings, the suite's dir
    assert env()["KMQ_DATA_DIR"] == str(data_dir.SUITE)
    assert "DJANGO_SETTINGS_MODULE" not in env()


def test_a_snapshot_sees_files_added_rewritten_and_removed(tmp_path) -> None:
    (tmp_path / "kept").write_text("a")
    (tmp_path / "gone").write_text("b")
    before = data_dir.snapshot(tmp_path)
    (tmp_path / "gone").unlink()
    (tmp_path / "celery").mkdir()
    (tmp_path / "celery" / "job.msg").write_text("{}")
    assert data_dir.changed(before, data_dir.snapshot(tmp_path)) == ["celery/job.msg", "gone"]
    assert data_dir.snapshot(tmp_path / "missing") == {}


def test_a_suite_that_writes_into_the_developers_data_dir_fails(tmp_path) -> None:
    developers = tmp_path / "var"
    developers.mkdir()
    test = tmp_path / "test_writes.py"
    test.write_text(
        f"def test_leaves_a_job():\n    open({str(developers / 'job.msg')!r}, 'w').write('x')\n"
    )
    pytest = [sys.executable, "-m", "pytest", "-c", str(ROOT / "pyproject.toml")]
    run = subprocess.run(
        [*pytest, str(test), "-q", "-p", "no:cacheprovider", "-p", "tests.data_dir"],
        cwd=ROOT,
        env=env(KMQ_DATA_DIR=str(developers)),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode != 0, run.stdout
    assert f"the suite wrote into the developer's data dir {developers}: job.msg" in run.stdout
    assert "1 passed, 1 error" in run.stdout
