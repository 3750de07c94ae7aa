"""Topic names: Kafka's rule for one, and the default companion topics as
SoftwareMill kmq names them."""

import re

# Kafka accepts 1 to 249 of these characters in a topic name.
MAX_TOPIC_LENGTH = 249
# Unanchored, so URL patterns can embed it; anchor it to check a whole name.
TOPIC_NAME = rf"[a-zA-Z0-9._-]{{1,{MAX_TOPIC_LENGTH}}}"
_TOPIC_NAME = re.compile(TOPIC_NAME)


class BadTopicName(ValueError):
    """A name Kafka would refuse; the message says which rule it breaks."""


def markers_topic(topic: str) -> str:
    return f"{topic}__markers"


def dlq_topic(topic: str) -> str:
    return f"{topic}__undelivered"


def schedules_topic(topic: str) -> str:
    """Where the tracker schedules delayed copies when the queue has a backoff."""
    return f"{topic}__schedules"


def counts_topic(topic: str) -> str:
    """Where share-backend clients publish their per-minute acknowledgement
    counts: the broker keeps none a console could read."""
    return f"{topic}__counts"


# The names a queue topic lends its companions: each must be legal too, or the
# queue registers fine and its topics can never be created.
COMPANIONS = (markers_topic, dlq_topic, schedules_topic, counts_topic)


def check_topic(name: str, *, queue: bool = False) -> str:
    """``name`` if Kafka accepts it as a topic (with ``queue``, its companion
    topics' names too); else BadTopicName saying why. The one rule the model,
    the forms, the API and /admin/ apply."""
    _check_one(name)
    if queue:
        for companion in COMPANIONS:
            if len(companion(name)) > MAX_TOPIC_LENGTH:
                longest = MAX_TOPIC_LENGTH - max(len(c("")) for c in COMPANIONS)
                raise BadTopicName(
                    f"at most {longest} characters for a queue: {companion(name)[-40:]!r} "
                    f"would be longer than {MAX_TOPIC_LENGTH}"
                )
    return name


def _check_one(name: str) -> None:
    if name in (".", ".."):
        raise BadTopicName(f"{name!r} is not a topic name Kafka allows")
    if len(name) > MAX_TOPIC_LENGTH:
        raise BadTopicName(f"at most {MAX_TOPIC_LENGTH} characters, got {len(name)}")
    if _TOPIC_NAME.fullmatch(name) is None:
        raise BadTopicName("1 or more of a-z, A-Z, 0-9, '.', '_' and '-' only")
