"""`pip install kmqadmin` gives the queue and scheduler cores, without Django,
Celery or PySpark: a service that only produces and consumes through kmq
must not pull in a web framework. Installed for real, in a venv of its own."""

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORES = ["kmqadmin.kmq", "kmqadmin.scheduler", "kmqadmin.kafka"]
# Modules that read package data when imported (share_groups: its KIP-932 schemas).
WITH_DATA = ["kmqadmin.kafka.admin.share_groups"]
EXTRAS_ONLY = ["django", "celery", "pyspark", "rest_framework"]

PROBE = """
import importlib, importlib.util, json, sys
for name in sys.argv[1].split(","):
    importlib.import_module(name)
print(json.dumps({
    "loaded": sorted(m for m in sys.modules if m.split(".")[0] in sys.argv[2].split(",")),
    "installed": [m for m in sys.argv[2].split(",") if importlib.util.find_spec(m)],
}))
"""


def test_the_cores_install_and_import_without_the_extras(tmp_path: Path) -> None:
    source = tmp_path / "src"  # a copy, so the build leaves nothing in the work tree
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source)
    shutil.copytree(
        ROOT / "kmqadmin", source / "kmqadmin", ignore=shutil.ignore_patterns("__pycache__")
    )
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    subprocess.run(
        [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(source)],
        check=True,
        timeout=600,
    )
    done = subprocess.run(
        [python, "-c", PROBE, ",".join(CORES + WITH_DATA), ",".join(EXTRAS_ONLY)],
        cwd=tmp_path,  # not the repo: the installed package must be what is imported
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip().splitlines()[-1] == '{"loaded": [], "installed": []}'
