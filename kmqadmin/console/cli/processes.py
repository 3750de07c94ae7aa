"""The commands of the processes `kmq run` starts; docker-compose.yml runs the same."""

import sys

# daphne's switch for its log and access log (INFO: its default); any other
# level is quiet: daphne, Celery and the demo print no banner or access log.
_DAPHNE_VERBOSITY = {"DEBUG": ["-v", "2"], "INFO": []}


ASGI = "kmqadmin.asgi:application"


def commands(host: str, port: int, demo: bool, level: str = "INFO") -> dict[str, list[str]]:
    """``level``: the children's log level, a Python logging name."""
    python = sys.executable
    quiet = level.upper() not in _DAPHNE_VERBOSITY  # no banners, no access log
    daphne = ["-v", "0"] if quiet else _DAPHNE_VERBOSITY[level.upper()]
    celery = [python, "-m", "celery", "-A", "kmqadmin", *(["--quiet"] if quiet else [])]
    procs = {
        "web": [python, "-m", "daphne", *daphne, "-b", host, "-p", str(port), ASGI],
        "worker": [*celery, "worker", "--loglevel", level],
        "beat": [*celery, "beat", "--loglevel", level],
    }
    if demo:
        # Quiet: the run itself has said which demo queues it registered.
        verbosity = ["--verbosity", "0"] if quiet else []
        procs["demo"] = [python, "manage.py", "kmq", *verbosity, "demo", "--traffic"]
    return procs
