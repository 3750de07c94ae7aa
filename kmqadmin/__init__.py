"""kmqadmin: Apache Kafka as a message queue, with a live web console.

The package imports nothing itself, so the queue and scheduler cores
(kmqadmin.kmq, kmqadmin.scheduler, kmqadmin.kafka) install and import
without Django, Celery or PySpark; the console's app config loads the
Celery app whenever Django runs.
"""
