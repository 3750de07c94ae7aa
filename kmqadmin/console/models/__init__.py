"""Configuration the console keeps in SQL; queue *state* lives only in Kafka.

One module per concept; Django finds a models package's models through
what it imports here."""

from kmqadmin.console.models.alerts import AlertEvent, AlertRule
from kmqadmin.console.models.audit import AuditEntry
from kmqadmin.console.models.clusters import Cluster
from kmqadmin.console.models.jobs import Job
from kmqadmin.console.models.minutes import LifecycleMinute, QueueMinute, ScheduleMinute
from kmqadmin.console.models.queues import Queue
from kmqadmin.console.models.schedules import ScheduleTopic
from kmqadmin.console.models.sent_once import SentOnce
from kmqadmin.console.models.sqs import SqsAccessKey, SqsMoveTask, SqsQueue
from kmqadmin.console.models.sso import SsoIdentity

__all__ = [
    "AlertEvent",
    "AlertRule",
    "AuditEntry",
    "Cluster",
    "Job",
    "LifecycleMinute",
    "Queue",
    "QueueMinute",
    "ScheduleMinute",
    "ScheduleTopic",
    "SentOnce",
    "SqsAccessKey",
    "SqsMoveTask",
    "SqsQueue",
    "SsoIdentity",
]
