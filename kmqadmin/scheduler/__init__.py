"""Scheduler core: delayed delivery on Kafka, wire-compatible with
etf1/kafka-message-scheduler. Imports nothing from Django.

from kmqadmin.scheduler import SchedulerConfig, Scheduler, ScheduleClient
"""

from kmqadmin.scheduler.client import ScheduleClient
from kmqadmin.scheduler.config import SchedulerConfig
from kmqadmin.scheduler.scheduler import Scheduler
from kmqadmin.scheduler.stats import PlannedSchedule, SchedulerStats
from kmqadmin.scheduler.upcoming import Upcoming, UpcomingView

__all__ = [
    "PlannedSchedule",
    "ScheduleClient",
    "Scheduler",
    "SchedulerConfig",
    "SchedulerStats",
    "Upcoming",
    "UpcomingView",
]
