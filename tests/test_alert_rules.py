"""The Prometheus alerting rules shipped in prometheus/: valid for
Prometheus (promtool check rules), each alert firing on its condition and
only then (promtool test rules, prometheus/alerts.test.yml), and every
metric they read one that kmqadmin exports (docs/metrics.md lists them)."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "prometheus" / "alerts.yml"


@pytest.fixture(scope="module")
def promtool() -> str:
    found = shutil.which("promtool")
    assert found, "promtool is missing: `make promtool` installs Debian's prometheus package"
    return found


@pytest.mark.parametrize(
    "check", [["check", "rules", "alerts.yml"], ["test", "rules", "alerts.test.yml"]]
)
def test_promtool(promtool: str, check: list[str]) -> None:
    done = subprocess.run(
        [promtool, *check], cwd=RULES.parent, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_metric_the_rules_read_is_exported() -> None:
    documented = set(
        re.findall(r"^\| `(kmqadmin_\w+)` \|", (ROOT / "docs" / "metrics.md").read_text(), re.M)
    )
    read = {
        re.sub(r"_(bucket|sum|count)$", "", name)
        for name in re.findall(r"\b(kmqadmin_\w+)", RULES.read_text())
    }
    assert read and read <= documented, read - documented
