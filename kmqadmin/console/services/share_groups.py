"""A share queue's group as the console and the API show it, and the reset
of its start offset.

Everything is asked of the broker when the page is built, each call bounded
by the admin's timeout; a broker error is carried on the view as text (the
page shows it and still answers), and once the group's cluster has failed
one call the rest are not attempted, so an unreachable broker costs one
timeout, not three.
"""

from dataclasses import dataclass, field

from confluent_kafka import KafkaException
from django.contrib.auth.base_user import AbstractBaseUser

from kmqadmin.kafka.errors import KafkaSetupError
from kmqadmin.kafka.share_groups import (
    PartitionProgress,
    Position,
    ResetResult,
    ShareGroup,
    ShareSettings,
)
from kmqadmin.kmq.share_counts_reader import CountsWindow

from ..models import Queue
from . import audit, clients
from .conflict import Conflict

# The counts table covers the last hour.
COUNTS_MINUTES = 60
BROKER_ERRORS = (KafkaSetupError, KafkaException, TimeoutError)


class NotAShareQueue(Conflict):
    """The queue is tracked by kmq markers: it has no share group."""


@dataclass
class ShareGroupView:
    group: ShareGroup | None = None
    progress: list[PartitionProgress] = field(default_factory=list)
    settings: ShareSettings | None = None
    counts: CountsWindow | None = None
    errors: list[str] = field(default_factory=list)

    @property
    def active_minutes(self) -> list:
        """The minutes of the last hour in which anything happened, newest first."""
        return [c for c in reversed(self.counts.minutes) if c.any()] if self.counts else []


def view(queue: Queue) -> ShareGroupView:
    _check_share(queue)
    config = queue.config()
    shown = ShareGroupView()
    try:
        admin = clients.share_group_admin(config)
        shown.group = admin.describe(config.group_id)
        shown.progress = admin.progress(config.group_id, queue.topic)
        shown.settings = admin.settings(config.group_id)
    except BROKER_ERRORS as exc:
        shown.errors.append(f"share group {config.group_id}: {exc}")
    try:
        shown.counts = clients.share_counts(config).last(COUNTS_MINUTES)
    except BROKER_ERRORS as exc:
        shown.errors.append(f"counts topic {config.counts_topic}: {exc}")
    return shown


def reset(user: AbstractBaseUser, queue: Queue, to: Position) -> ResetResult:
    """Moves the group's start offset on every partition; audited, whether
    the broker moved it, refused it (GroupNotEmpty) or failed."""
    _check_share(queue)
    config = queue.config()
    target = f"{queue.topic} share group {config.group_id}"
    with audit.action(user, "reset share group start offset", target, before={"to": to}) as entry:
        admin = clients.share_group_admin(config)
        result = admin.reset_start_offset(config.group_id, queue.topic, to)
        entry.after = {
            "offsets": {str(p): o for p, o in result.offsets.items()},
            "errors": {str(p): e for p, e in result.errors.items()},
        }
    return result


def _check_share(queue: Queue) -> None:
    if queue.backend != "share":
        raise NotAShareQueue(f"{queue.topic} is a {queue.backend} queue: it has no share group")
