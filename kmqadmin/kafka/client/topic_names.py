"""Kafka's rule for a topic name, below every core: the queue's names
(kmq/names.py) and the scheduler's target topics (scheduler/wire.py) both
apply it, and kmq already imports the scheduler."""

import re

# Kafka accepts 1 to 249 of these characters in a topic name.
MAX_TOPIC_LENGTH = 249
# Unanchored, so URL patterns can embed it; anchor it to check a whole name.
TOPIC_NAME = rf"[a-zA-Z0-9._-]{{1,{MAX_TOPIC_LENGTH}}}"
_TOPIC_NAME = re.compile(TOPIC_NAME)


class BadTopicName(ValueError):
    """A name Kafka would refuse; the message says which rule it breaks."""


def check_name(name: str) -> str:
    """``name`` if Kafka accepts it as a topic; else BadTopicName saying why."""
    if name in (".", ".."):
        raise BadTopicName(f"{name!r} is not a topic name Kafka allows")
    if len(name) > MAX_TOPIC_LENGTH:
        raise BadTopicName(f"at most {MAX_TOPIC_LENGTH} characters, got {len(name)}")
    if _TOPIC_NAME.fullmatch(name) is None:
        raise BadTopicName("1 or more of a-z, A-Z, 0-9, '.', '_' and '-' only")
    return name
