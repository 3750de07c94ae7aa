"""Django validators over the cores' rules, so a model field, a form, the
API and /admin/ refuse a value with the same words the core would."""

from django.core.exceptions import ValidationError

from kmqadmin.kmq import names
from kmqadmin.kmq.given_headers import BadInput, check_text


def topic_name(value: str) -> None:
    """A topic Kafka accepts (a schedules topic, a target, a companion override)."""
    try:
        names.check_topic(value)
    except names.BadTopicName as exc:
        raise ValidationError(str(exc), code="topic") from None


def topic_names(value: object) -> None:
    """A list of topic names (a schedules topic's allowlist of targets)."""
    if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
        raise ValidationError("expected a list of topic names", code="topics")
    for name in value:
        try:
            names.check_topic(name)
        except names.BadTopicName as exc:
            raise ValidationError(f"{name}: {exc}", code="topic") from None


def queue_topic_name(value: str) -> None:
    """A queue topic: its companion topics' names must be legal too."""
    try:
        names.check_topic(value, queue=True)
    except names.BadTopicName as exc:
        raise ValidationError(str(exc), code="topic") from None


def given_text(value: str) -> None:
    """A key or a schedule id a producer can write (kmq.given_headers)."""
    try:
        check_text(value, "the text")
    except BadInput as exc:
        raise ValidationError(str(exc), code="text") from None
