"""Default companion topic names, as SoftwareMill kmq names them."""


def markers_topic(topic: str) -> str:
    return f"{topic}__markers"


def dlq_topic(topic: str) -> str:
    return f"{topic}__undelivered"


def schedules_topic(topic: str) -> str:
    """Where the tracker schedules delayed copies when the queue has a backoff."""
    return f"{topic}__schedules"
