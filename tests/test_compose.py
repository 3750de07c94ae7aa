"""docker-compose.yml has the production shape and runs `make run`'s commands."""

import shutil
import subprocess

import pytest
import yaml

from kmqadmin.console.cli.processes import commands
from tests.process import ROOT, env


@pytest.fixture(scope="module")
def services() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]


def test_every_long_running_service_has_a_healthcheck(services: dict) -> None:
    for name in ("kafka", "postgres", "redis", "web", "worker", "beat"):
        assert services[name]["healthcheck"]["test"], name


def test_app_services_run_the_same_commands_as_make_run(services: dict) -> None:
    local = commands("0.0.0.0", 8000, demo=False)
    for name in ("web", "worker", "beat"):
        assert services[name]["command"] == ["python", *local[name][1:]], name


def test_app_services_point_every_part_at_a_real_server(services: dict) -> None:
    variables = services["web"]["environment"]
    assert variables["KAFKA_BOOTSTRAP_SERVERS"] == "kafka:9092"
    assert variables["DATABASE_URL"].startswith("postgres://")
    assert variables["REDIS_URL"].startswith("redis://")


@pytest.mark.skipif(
    subprocess.run(["docker", "compose", "version"], capture_output=True).returncode != 0
    if shutil.which("docker")
    else True,
    reason="docker compose is not installed here",
)
def test_docker_compose_config_accepts_the_file() -> None:
    result = subprocess.run(
        ["docker", "compose", "config", "--quiet"],
        cwd=ROOT,
        env=env(DJANGO_SECRET_KEY="x"),
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
