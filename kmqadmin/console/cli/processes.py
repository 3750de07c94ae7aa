"""The commands of the processes `kmq run` starts; docker-compose.yml runs the same."""

import sys

ASGI = "kmqadmin.asgi:application"

# The levels at which the children print their banners and the web its access
# log; at any other level they are quiet.
_LOUD = ("DEBUG", "INFO")


def commands(host: str, port: int, demo: bool, level: str = "INFO") -> dict[str, list[str]]:
    """``level``: the children's log level, a Python logging name."""
    python = sys.executable
    quiet = level.upper() not in _LOUD
    celery = [python, "-m", "celery", "-A", "kmqadmin", *(["--quiet"] if quiet else [])]
    procs = {
        "web": web(host, port, level),
        "worker": [*celery, "worker", "--loglevel", level],
        "beat": [*celery, "beat", "--loglevel", level],
    }
    if demo:
        # Quiet: the run itself has said which demo queues it registered.
        verbosity = ["--verbosity", "0"] if quiet else []
        procs["demo"] = [python, "manage.py", "kmq", *verbosity, "demo", "--traffic"]
    return procs


def web(host: str, port: int, level: str = "INFO") -> list[str]:
    """The web process: uvicorn with the C HTTP parser (httptools) and event
    loop (uvloop). Measured under bench/sqs.py at `make run`'s level, it takes
    about a third less CPU per request than daphne, whose twisted parser was a
    fifth of ours. Django's lifespan is unused; proxy headers stay Django's to
    trust (SECURE_PROXY_SSL_HEADER), not the server's."""
    access_log = [] if level.upper() in _LOUD else ["--no-access-log"]
    logging = ["--log-level", level.lower(), *access_log]
    server = ["--http", "httptools", "--loop", "uvloop", "--ws", "websockets"]
    options = [*server, "--lifespan", "off", "--no-proxy-headers", *logging]
    return [sys.executable, "-m", "uvicorn", *options, "--host", host, "--port", str(port), ASGI]
