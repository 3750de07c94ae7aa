"""Topic names: Kafka's rule for one, and the default companion topics as
SoftwareMill kmq names them."""

# Kafka accepts 1 to 249 of these characters in a topic name.
MAX_TOPIC_LENGTH = 249
# Unanchored, so URL patterns can embed it; anchor it to check a whole name.
TOPIC_NAME = rf"[a-zA-Z0-9._-]{{1,{MAX_TOPIC_LENGTH}}}"


def markers_topic(topic: str) -> str:
    return f"{topic}__markers"


def dlq_topic(topic: str) -> str:
    return f"{topic}__undelivered"


def schedules_topic(topic: str) -> str:
    """Where the tracker schedules delayed copies when the queue has a backoff."""
    return f"{topic}__schedules"
