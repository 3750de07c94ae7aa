"""The consumer groups and share groups of a registered cluster as the
console and the API show them, and the one offset reset every page uses
(the group page's, and a share queue's page's).

A reset is a plan (the dry run an admin reads) and then the apply of exactly
the planned offsets, audited with the offsets before and after.
"""

from dataclasses import dataclass, field

from confluent_kafka import KafkaException
from django.contrib.auth.base_user import AbstractBaseUser
from django.http import Http404

from kmqadmin.console.models import Cluster, Queue
from kmqadmin.console.services.audit import trail as audit
from kmqadmin.console.services.clusters import clients
from kmqadmin.kafka.admin import offset_reset
from kmqadmin.kafka.admin.groups import KINDS, Group, GroupListing, GroupNotFound, Kind, Partition
from kmqadmin.kafka.admin.offset_reset import PlannedMove, ResetPlan, ResetTarget
from kmqadmin.kafka.client.errors import KafkaSetupError

BROKER_ERRORS = (KafkaSetupError, KafkaException, TimeoutError)
RESET_ACTION = "reset group offsets"


@dataclass
class Listed:
    group: GroupListing
    queue: Queue | None


@dataclass
class GroupsView:
    """Both kinds on one cluster; a kind the broker did not list is an error
    shown on the page, the other kind is still listed."""

    cluster: Cluster
    groups: dict[Kind, list[Listed]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class PartitionLag:
    topic: str
    partition: int
    offset: int | None  # committed (consumer) or start offset (share); None: none yet
    log_start: int
    end: int

    @property
    def lag(self) -> int | None:
        return None if self.offset is None else max(0, self.end - max(self.offset, self.log_start))


@dataclass(frozen=True)
class Applied:
    """What a reset moved: each partition's offset before and after (the
    broker refused those in ``errors``)."""

    moves: tuple[PlannedMove, ...]
    errors: dict[Partition, str]


@dataclass
class GroupDetail:
    cluster: Cluster
    group: Group
    partitions: list[PartitionLag]
    queue: Queue | None

    @property
    def total_lag(self) -> int:
        return sum(p.lag or 0 for p in self.partitions)


def cluster_or_404(name: str) -> Cluster:
    try:
        return Cluster.objects.get(name=name)
    except Cluster.DoesNotExist:
        raise Http404(f"no cluster {name} registered") from None


def listing(cluster: Cluster) -> GroupsView:
    shown = GroupsView(cluster)
    owners = _owners(cluster)
    for kind in KINDS:
        try:
            found = clients.group_admin(cluster, kind).list_groups()
        except BROKER_ERRORS as exc:
            shown.errors.append(f"{kind} groups: {exc}")
            continue
        shown.groups[kind] = [Listed(g, owners.get(g.group_id)) for g in found]
    return shown


def detail(cluster: Cluster, kind: Kind, group_id: str) -> GroupDetail:
    """Http404 for no such group; a broker error goes up (the view says it)."""
    admin = clients.group_admin(cluster, kind)
    try:
        group = admin.group(group_id)
    except GroupNotFound as exc:
        raise Http404(str(exc)) from None
    positions: dict[Partition, int | None] = admin.positions(group_id)
    for member in group.members:
        for assigned in member.assignment:
            positions.setdefault(assigned, None)
    ordered = sorted(positions)
    low, high = admin.logs.earliest(ordered), admin.logs.latest(ordered)
    partitions = [PartitionLag(t, p, positions[t, p], low[t, p], high[t, p]) for t, p in ordered]
    return GroupDetail(cluster, group, partitions, _owners(cluster).get(group_id))


def preview(
    cluster: Cluster, kind: Kind, group_id: str, target: ResetTarget, *, create: bool = False
) -> ResetPlan:
    """The dry run: nothing moves, nothing is audited. ``create``: a group
    that does not exist yet is made by the apply (a new share queue's)."""
    admin = clients.group_admin(cluster, kind)
    return offset_reset.plan(admin, admin.logs, group_id, target, create=create)


def apply(
    user: AbstractBaseUser,
    cluster: Cluster,
    kind: Kind,
    group_id: str,
    target: ResetTarget,
    offsets: dict[Partition, int],
    *,
    create: bool = False,
) -> Applied:
    """Moves exactly ``offsets`` (a confirmed preview's); audited with the
    offsets before and after, whether the broker moved, refused or failed."""
    admin = clients.group_admin(cluster, kind)
    current = admin.positions(group_id)
    to = target.described()
    before = {"to": to, "offsets": _named({p: current.get(p) for p in offsets})}
    where = f"{kind} group {group_id} on cluster {cluster.name}"
    with audit.action(user, RESET_ACTION, where, before=before) as entry:
        result = offset_reset.apply(admin, admin.logs, group_id, offsets, create=create)
        entry.after = {
            "to": to,
            "offsets": _named(result.offsets),
            "errors": _named(result.errors),
        }
    moves = tuple(PlannedMove(p, current.get(p), o) for p, o in sorted(result.offsets.items()))
    return Applied(moves, result.errors)


def reset(
    user: AbstractBaseUser, cluster: Cluster, kind: Kind, group_id: str, target: ResetTarget
) -> Applied:
    """Preview and apply in one step, for a share queue's page (whose group
    may not exist yet: the reset makes it)."""
    planned = preview(cluster, kind, group_id, target, create=True)
    return apply(user, cluster, kind, group_id, target, planned.offsets, create=True)


def named(partition: Partition) -> str:
    """A topic-partition as the forms, the audit trail and the API spell it."""
    return f"{partition[0]}:{partition[1]}"


def parse_offsets(given: object) -> dict[Partition, int]:
    """{"topic:partition": offset} as posted back from a preview; ValueError
    saying what is wrong."""
    if not isinstance(given, dict) or not given:
        raise ValueError('offsets: a JSON object {"topic:partition": offset}')
    parsed = {}
    for where, offset in given.items():
        topic, _, partition = str(where).rpartition(":")
        if not topic or not partition.isdigit() or type(offset) is not int or offset < 0:
            raise ValueError(f"offsets: {where!r}: {offset!r} is not topic:partition: offset")
        parsed[topic, int(partition)] = offset
    return parsed


def _named[V](by_partition: dict[Partition, V]) -> dict[str, V]:
    return {named(p): v for p, v in sorted(by_partition.items())}


def _owners(cluster: Cluster) -> dict[str, Queue]:
    """The registered queue each group id serves (its workers' group or its
    tracker's) on this cluster."""
    owners: dict[str, Queue] = {}
    for queue in Queue.objects.filter(cluster=cluster).select_related("cluster"):
        owners[queue.group_id] = queue
        if queue.backend == "kmq":
            owners[queue.config().tracker_group_id] = queue
    return owners
