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
    for name in ("kafka", "postgres", "redis", "web", "worker", "beat", "prometheus"):
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


def test_prometheus_scrapes_the_web_and_every_workers_metrics_port(services: dict) -> None:
    prometheus = services["prometheus"]
    image, _, tag = prometheus["image"].partition(":")
    assert image == "prom/prometheus" and tag not in ("", "latest")
    mounted = prometheus["volumes"][0].split(":")
    config = yaml.safe_load((ROOT / mounted[0]).read_text())
    assert mounted[1] == "/etc/prometheus/prometheus.yml"
    jobs = {job["job_name"]: job for job in config["scrape_configs"]}
    web = jobs["kmqadmin-web"]
    assert web["static_configs"][0]["targets"] == ["web:8000"]
    assert web["authorization"]["credentials_file"] == "/run/secrets/metrics_token"
    assert "metrics_token" in prometheus["secrets"]
    rules = dict(volume.split(":")[:2] for volume in prometheus["volumes"][1:])
    assert config["rule_files"] == ["alerts.yml"]
    assert rules["./prometheus/alerts.yml"] == "/etc/prometheus/alerts.yml"
    worker = jobs["kmqadmin-worker"]["dns_sd_configs"][0]
    assert worker["names"] == ["worker"]
    assert worker["port"] == services["worker"]["environment"]["KMQ_WORKER_METRICS_PORT"]
    assert services["worker"]["environment"]["KMQ_WORKER_METRICS_ADDR"] == "0.0.0.0"
    for name in ("web", "worker"):  # each its own, empty at start
        assert services[name]["environment"]["PROMETHEUS_MULTIPROC_DIR"] in services[name]["tmpfs"]
    web_hosts = services["web"]["environment"]["DJANGO_ALLOWED_HOSTS"]
    assert "web" in web_hosts.split(":-")[1].rstrip("}").split(",")


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
        env=env(DJANGO_SECRET_KEY="x", KMQ_METRICS_TOKEN="y"),
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
