"""Default companion topic names, as SoftwareMill kmq names them."""


def markers_topic(topic: str) -> str:
    return f"{topic}__markers"


def dlq_topic(topic: str) -> str:
    return f"{topic}__undelivered"
