"""Scheduler core: delayed delivery on Kafka, wire-compatible with
etf1/kafka-message-scheduler. Imports nothing from Django.

from kmqadmin.scheduler import SchedulerConfig, Scheduler, ScheduleClient
"""

from .client import ScheduleClient
from .config import SchedulerConfig
from .scheduler import Scheduler
from .stats import PlannedSchedule, SchedulerStats
from .upcoming import Upcoming, UpcomingView

__all__ = [
    "PlannedSchedule",
    "ScheduleClient",
    "Scheduler",
    "SchedulerConfig",
    "SchedulerStats",
    "Upcoming",
    "UpcomingView",
]
