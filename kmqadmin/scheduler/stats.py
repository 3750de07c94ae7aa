"""What a scheduler exposes to the console and the API."""

from dataclasses import dataclass

from kmqadmin.scheduler.lateness import LatenessSnapshot


@dataclass(frozen=True, slots=True)
class SchedulerStats:
    held: int  # schedules in memory, due within the horizon
    fired: int
    skipped: int  # undecodable records, counted and logged
    undeliverable: int  # due, but the target topic does not exist
    forbidden: int  # due, but the target topic is not among the allowed targets
    partitions: tuple[int, ...]
    loading: tuple[int, ...]  # partitions still reading what was there at assignment
    horizon_end_ms: int
    lateness: LatenessSnapshot  # how late the fired ones fired
    rebalances: int  # assignments this scheduler received


@dataclass(frozen=True, slots=True, order=True)
class PlannedSchedule:
    """A held schedule: the record at (partition, offset) fires at ``due_ms``.

    The key and payload stay in Kafka; read them at these coordinates.
    """

    due_ms: int
    partition: int
    offset: int
