"""The commands of the processes `kmq run` starts; docker-compose.yml runs the same."""

import sys


def commands(host: str, port: int, demo: bool) -> dict[str, list[str]]:
    python = sys.executable
    procs = {
        "web": [python, "-m", "daphne", "-b", host, "-p", str(port), "kmqadmin.asgi:application"],
        "worker": [python, "-m", "celery", "-A", "kmqadmin", "worker", "--loglevel", "INFO"],
        "beat": [python, "-m", "celery", "-A", "kmqadmin", "beat", "--loglevel", "INFO"],
    }
    if demo:
        procs["demo"] = [python, "manage.py", "kmq", "demo", "--traffic"]
    return procs
