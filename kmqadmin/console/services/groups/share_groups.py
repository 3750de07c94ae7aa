"""A share queue's group as the console and the API show it, and the reset
of its start offset (the groups service's reset, on the queue's topic).

Everything is asked of the broker when the page is built, each call bounded
by the admin's timeout; a broker error is carried on the view as text (the
page shows it and still answers), and once the group's cluster has failed
one call the rest are not attempted, so an unreachable broker costs one
timeout, not three.
"""

from dataclasses import dataclass, field

from django.contrib.auth.base_user import AbstractBaseUser

from kmqadmin.console.models import Queue
from kmqadmin.console.services.clusters import clients
from kmqadmin.console.services.conflict import Conflict
from kmqadmin.console.services.groups import listing as groups
from kmqadmin.kafka.admin.offset_reset import ResetTarget
from kmqadmin.kafka.admin.share_groups import PartitionProgress, ShareGroup, ShareSettings
from kmqadmin.kafka.client.clock import now_ms
from kmqadmin.kmq.share.counts import MINUTE_MS, ShareCounts
from kmqadmin.kmq.share.counts_reader import CountsWindow

# The counts table covers the last hour.
COUNTS_MINUTES = 60
BROKER_ERRORS = groups.BROKER_ERRORS


class NotAShareQueue(Conflict):
    """The queue is tracked by kmq markers: it has no share group."""


@dataclass(frozen=True)
class ConsumerRow:
    """One client's counts over the window, with the minute and what it
    held at its latest report; ``member``: in the group now."""

    client: str
    member: bool
    counts: ShareCounts


@dataclass
class ShareGroupView:
    group: ShareGroup | None = None
    progress: list[PartitionProgress] = field(default_factory=list)
    settings: ShareSettings | None = None
    counts: CountsWindow | None = None
    errors: list[str] = field(default_factory=list)

    @property
    def consumers(self) -> list[ConsumerRow]:
        """Every client that reported in the last hour, members first."""
        if not self.counts:
            return []
        members = {m.member_id for m in self.group.members} if self.group else set()
        rows = [ConsumerRow(cid, cid in members, c) for cid, c in self.counts.clients.items()]
        return sorted(rows, key=lambda row: (not row.member, row.client))

    @property
    def active_minutes(self) -> list:
        """The minutes of the last hour in which anything happened, newest first."""
        return [c for c in reversed(self.counts.minutes) if c.any()] if self.counts else []


def view(queue: Queue) -> ShareGroupView:
    check_share(queue)
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
        # The last hour and this minute so far: a client that closed reported it.
        shown.counts = clients.share_counts(config).last(COUNTS_MINUTES + 1, now_ms() + MINUTE_MS)
    except BROKER_ERRORS as exc:
        shown.errors.append(f"counts topic {config.counts_topic}: {exc}")
    return shown


def reset(user: AbstractBaseUser, queue: Queue, target: ResetTarget) -> groups.Applied:
    """Moves the group's start offset on the queue's partitions (all of
    them, or the target's one); audited like every group reset."""
    check_share(queue)
    on_queue = ResetTarget(target.mode, target.value, queue.topic, target.partition)
    return groups.reset(user, queue.cluster, "share", queue.group_id, on_queue)


def check_share(queue: Queue) -> None:
    """NotAShareQueue (409) for a queue of the kmq backend: it has no share group."""
    if queue.backend != "share":
        raise NotAShareQueue(f"{queue.topic} is a {queue.backend} queue: it has no share group")
