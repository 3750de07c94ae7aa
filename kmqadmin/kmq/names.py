"""Topic names: Kafka's rule for one, and the default companion topics as
SoftwareMill kmq names them."""

from kmqadmin.kafka.client.topic_names import MAX_TOPIC_LENGTH, TOPIC_NAME, BadTopicName, check_name

# The rule itself is the kafka core's, so the scheduler can apply it too.
__all__ = ["MAX_TOPIC_LENGTH", "TOPIC_NAME", "BadTopicName", "check_topic"]


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
    check_name(name)
    if queue:
        for companion in COMPANIONS:
            if len(companion(name)) > MAX_TOPIC_LENGTH:
                longest = MAX_TOPIC_LENGTH - max(len(c("")) for c in COMPANIONS)
                raise BadTopicName(
                    f"at most {longest} characters for a queue: {companion(name)[-40:]!r} "
                    f"would be longer than {MAX_TOPIC_LENGTH}"
                )
    return name
