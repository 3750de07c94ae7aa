"""librdkafka's log, through Python's logging, a broker's failures said once a minute.

Left to itself, librdkafka writes to stderr every failed connection attempt
of every client to every broker: with a broker away, a web process, a
worker and the demo traffic logged "Connection refused" some 400 times a
second between them. Every client this package configures (config.py)
logs to LOGGER instead, and its filter lets one line through per broker and
kind of failure per minute, the next one saying how many it held back.
A client hands its lines over only when it is polled, so an idle client
(a producer cached for the next request) says an outage's failures when it
is next used, or closed: the time of a line is when it was said, not when
the connection failed.
What it says of a state it retries by itself on a broker just started (a
coordinator still loading) is INFO, not the WARNING it gave: on every first
`kmq run` it is routine. Everything else passes unchanged, at its level.

confluent-kafka hands a client's log lines over when the client is polled
(consume, poll, flush), from the thread that polls.
"""

import logging
import threading
import time
from dataclasses import dataclass

# librdkafka's facilities for a connection that failed or went down, and
# for "all brokers are down".
THROTTLED = frozenset({"FAIL", "ERROR"})
EVERY_S = 60.0

LOGGER = logging.getLogger("kmqadmin.librdkafka")


@dataclass
class _Said:
    at: float
    held: int = 0


class OncePerMinute(logging.Filter):
    """For records as confluent-kafka logs them: ``(facility, client, text)``,
    the text starting with the broker it is about ("host:port/id: ...")."""

    def __init__(self, every_s: float = EVERY_S) -> None:
        super().__init__()
        self.every_s = every_s
        self._said: dict[tuple[str, str], _Said] = {}
        self._lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        key = _key(record)
        if key is None:
            return True
        now = time.monotonic()
        with self._lock:
            said = self._said.get(key)
            if said is not None and now - said.at < self.every_s:
                said.held += 1
                return False
            self._said[key] = _Said(now)
        if said is not None and said.held:
            record.msg = f"{record.msg} (and {said.held} more like it held back since the last)"
        return True


# (facility, what the text says) of states librdkafka retries by itself.
ROUTINE = frozenset({("GETPID", "Coordinator load in progress")})


class Routine(logging.Filter):
    """Lowers ROUTINE lines to INFO, and lets them through only where INFO is
    logged (the logger checked the level the line came with)."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) == 3 and record.levelno > logging.INFO:
            facility, text = args[0], str(args[2])
            if any(facility == f and says in text for f, says in ROUTINE):
                record.levelno, record.levelname = logging.INFO, "INFO"
                return logging.getLogger(record.name).isEnabledFor(logging.INFO)
        return True


def _key(record: logging.LogRecord) -> tuple[str, str] | None:
    args = record.args
    if not (isinstance(args, tuple) and len(args) == 3 and args[0] in THROTTLED):
        return None
    facility, _client, text = args
    text = str(text)
    if text.startswith("[thrd:"):  # the thread's name, then the broker's
        text = text.split("]: ", 1)[-1]
    return str(facility), text.split(": ", 1)[0]


LOGGER.addFilter(OncePerMinute())
LOGGER.addFilter(Routine())
