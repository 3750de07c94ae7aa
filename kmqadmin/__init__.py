"""kmqadmin: Apache Kafka as a message queue, with a live web console."""

from .celery import app as celery_app

__all__ = ["celery_app"]
