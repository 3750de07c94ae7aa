"""What an operator needs to know about one share group (KIP-932), and the one
change they may make: moving an empty group's start offset.

confluent-kafka 2.16 (and its librdkafka) has no share-group admin call at
all, so the group's members and start offsets travel over the Kafka protocol
through kafka-python, with our own schemas for the three messages
(``kmqadmin.kafka.protocol``). Configs, watermarks and offsets for a time
come from confluent-kafka's AdminClient, which has them. Every call is
bounded by the admin's ``timeout_s``; a broker that does not speak the
share-group APIs gives ShareGroupsUnsupported, any other broker error
ShareGroupError, never a hang.
"""

import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import kafka.errors as protocol_errors
from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType
from kafka.admin import KafkaAdminClient
from kafka.protocol.metadata import CoordinatorType

from kmqadmin.kafka.admin.groups import (
    Group,
    GroupError,
    GroupListing,
    GroupNotEmpty,
    GroupNotFound,
    Kind,
    Member,
    Partition,
    not_empty,
)
from kmqadmin.kafka.admin.log_offsets import LogAdmin
from kmqadmin.kafka.protocol import (
    AlterShareGroupOffsetsRequest,
    DescribeShareGroupOffsetsRequest,
    ShareGroupDescribeRequest,
)
from kmqadmin.kafka.protocol.config import protocol_config

_NOT_FOUND = protocol_errors.GroupIdNotFoundError.errno
_NOT_EMPTY = protocol_errors.NonEmptyGroupError.errno


class ShareGroupError(GroupError):
    """The broker refused or failed a share-group call, or cannot serve a
    queue as configured; the message says why and what to change."""


class ShareGroupsUnsupported(ShareGroupError):
    """The cluster does not speak KIP-932's share-group admin APIs."""


@dataclass(frozen=True)
class ShareGroup:
    """A group as its coordinator describes it. One that does not exist yet
    (no consumer has joined, no offset was set) has ``exists`` False."""

    group_id: str
    exists: bool
    state: str = ""
    epoch: int = 0
    members: tuple[Member, ...] = ()


@dataclass(frozen=True)
class PartitionProgress:
    """Where the group stands on one partition.

    ``start_offset`` is the share-partition start offset as the share
    coordinator persisted it: every record below it is done (accepted,
    rejected or archived). It may trail the broker's live state by one
    acknowledgement write. Records from it to ``end`` may be acquired and
    acknowledged out of order, so end minus start is only an upper bound on
    what is left; a 4.2 broker counts the records acknowledged past the start
    too and says the exact ``lag`` (``lag_exact``), an older one leaves the
    upper bound. Start and lag are None while the group has not yet started on
    the partition.
    """

    partition: int
    start_offset: int | None
    log_start: int
    end: int
    lag: int | None
    lag_exact: bool = False
    error: str | None = None


@dataclass(frozen=True)
class _Start:
    offset: int | None
    lag: int  # the broker's, -1 when it does not know
    error: str | None


@dataclass(frozen=True, slots=True)
class BrokerLimits:
    """The broker's bounds on share groups (its group.share.* configs)."""

    delivery_count_limit: int
    min_lock_ms: int
    max_lock_ms: int


@dataclass(frozen=True)
class ShareSettings:
    """The group's effective configs and the broker's bounds on them."""

    lock_duration_ms: int
    auto_offset_reset: str
    isolation_level: str
    limits: BrokerLimits


class ShareGroupAdmin(LogAdmin):
    """Share-group admin for one cluster. Thread-safe: the web process keeps
    one per queue or cluster (kafka-python runs its I/O on a thread of its
    own). A GroupAdmin (kafka.admin.groups) for the offset reset."""

    kind: Kind = "share"

    def __init__(
        self,
        bootstrap_servers: str,
        kafka_config: Mapping[str, Any] | None = None,
        timeout_s: float = 5.0,
    ) -> None:
        super().__init__(bootstrap_servers, kafka_config, timeout_s)
        try:
            self._protocol = KafkaAdminClient(
                **protocol_config(bootstrap_servers, kafka_config, timeout_s)
            )
        except protocol_errors.KafkaError as exc:
            raise ShareGroupError(f"cannot reach Kafka at {bootstrap_servers}: {exc}") from None

    def close(self) -> None:
        """Closes the protocol client; the AdminClient (librdkafka's, which
        has no close) goes with its last reference, here."""
        self._protocol.close()
        del self._admin, self.logs

    def list_groups(self) -> list[GroupListing]:
        """Every share group of the cluster (ListGroups v5's types filter,
        asked of each broker), by id."""
        listed = self._run(lambda: self._protocol._async_list_groups(types_filter=["share"]))
        groups = [GroupListing(g["group_id"], "share", g["group_state"], "share") for g in listed]
        return sorted(groups, key=lambda g: g.group_id)

    def group(self, group_id: str) -> Group:
        described = self.describe(group_id)
        if not described.exists:
            raise GroupNotFound(f"no share group {group_id}")
        return Group(group_id, "share", described.state, "share", described.members)

    def positions(self, group_id: str) -> dict[Partition, int | None]:
        """The start offset of every partition the group has one on."""
        starts = self._start_offsets(group_id, None)
        return {tp: start.offset for tp, start in starts.items()}

    def describe(self, group_id: str) -> ShareGroup:
        response = self._at_coordinator(group_id, ShareGroupDescribeRequest(group_ids=[group_id]))
        (group,) = response.groups
        if group.error_code == _NOT_FOUND:
            return ShareGroup(group_id, exists=False)
        _raise_for(group.error_code, group.error_message, f"describing share group {group_id}")
        return ShareGroup(
            group_id,
            exists=True,
            state=group.group_state,
            epoch=group.group_epoch,
            members=tuple(_member(m) for m in group.members),
        )

    def progress(self, group_id: str, topic: str) -> list[PartitionProgress]:
        """Start offset and lag per partition of ``topic``, in partition order."""
        partitions = self.logs.partitions(topic)
        starts = self._start_offsets(group_id, {topic: [p for _, p in partitions]})
        low, high = self.logs.earliest(partitions), self.logs.latest(partitions)
        unknown = _Start(None, -1, None)
        return [_progress(tp[1], starts.get(tp, unknown), low[tp], high[tp]) for tp in partitions]

    def settings(self, group_id: str) -> ShareSettings:
        group = self._configs(ConfigResource(ResourceType.GROUP, group_id))
        limits = broker_limits(self._admin, self.timeout_s)
        return ShareSettings(
            lock_duration_ms=int(group["share.record.lock.duration.ms"]),
            auto_offset_reset=group["share.auto.offset.reset"],
            isolation_level=group["share.isolation.level"],
            limits=limits,
        )

    def move(self, group_id: str, offsets: dict[Partition, int]) -> dict[Partition, str]:
        """Sets the start offset of each partition given (the broker refuses
        it, GroupNotEmpty, while the group has members); creates the group,
        empty, when it does not exist yet. Returns the partitions refused."""
        topic = AlterShareGroupOffsetsRequest.AlterShareGroupOffsetsRequestTopic
        by_topic: dict[str, list[Any]] = {}
        for (name, partition), offset in offsets.items():
            by_topic.setdefault(name, []).append(_alter_partition(partition, offset))
        request = AlterShareGroupOffsetsRequest(
            group_id=group_id,
            topics=[topic(topic_name=t, partitions=ps) for t, ps in by_topic.items()],
        )
        response = self._at_coordinator(group_id, request)
        if response.error_code == _NOT_EMPTY:
            raise GroupNotEmpty(not_empty(group_id, None))
        _raise_for(response.error_code, response.error_message, f"resetting {group_id}")
        return {
            (t.topic_name, p.partition_index): _error_text(p.error_code, p.error_message)
            for t in response.responses
            for p in t.partitions
            if p.error_code
        }

    def _start_offsets(
        self, group_id: str, topics: dict[str, list[int]] | None
    ) -> dict[Partition, _Start]:
        """Of the partitions asked, or of every partition (None)."""
        R = DescribeShareGroupOffsetsRequest
        group = R.DescribeShareGroupOffsetsRequestGroup
        asked = None
        if topics is not None:
            topic = group.DescribeShareGroupOffsetsRequestTopic
            asked = [topic(topic_name=t, partitions=ps) for t, ps in topics.items()]
        request = R(groups=[group(group_id=group_id, topics=asked)])
        (described,) = self._at_coordinator(group_id, request).groups
        if described.error_code == _NOT_FOUND:
            return {}
        _raise_for(described.error_code, described.error_message, f"offsets of {group_id}")
        return {
            (t.topic_name, p.partition_index): _Start(
                p.start_offset if p.start_offset >= 0 else None,
                p.lag,
                _error_text(p.error_code, p.error_message) if p.error_code else None,
            )
            for t in described.topics
            for p in t.partitions
        }

    def _at_coordinator(self, group_id: str, request: Any) -> Any:
        """``request`` answered by the group's coordinator, found again when
        it moved or was still loading, until the timeout."""
        return self._run(lambda: self._coordinated(group_id, request))

    async def _coordinated(self, group_id: str, request: Any) -> Any:
        deadline = time.monotonic() + self.timeout_s
        while True:
            try:
                node = await self._protocol._find_coordinator_id(group_id)
                response = await self._protocol._manager.send(request, node_id=node)
            except protocol_errors.KafkaError as exc:
                if not exc.retriable or time.monotonic() >= deadline:
                    raise
                response = None
            if response is not None and (
                not _coordinator_moved(_first_error(response)) or time.monotonic() >= deadline
            ):
                return response
            # Ask again where the group lives (kafka-python keeps the answer).
            known = self._protocol._manager.cluster._coordinators
            known.pop((CoordinatorType.GROUP, group_id), None)
            await self._protocol._net.sleep(0.1)

    def _run(self, call: Callable[[], Awaitable[Any]]) -> Any:
        try:
            return self._protocol._manager.run(call)
        except protocol_errors.IncompatibleBrokerVersion as exc:
            raise ShareGroupsUnsupported(
                f"the broker does not speak the share-group admin APIs ({exc}); KIP-932 "
                "needs Apache Kafka 4.1 or later with share groups enabled"
            ) from None
        except protocol_errors.KafkaError as exc:
            raise ShareGroupError(f"share-group call failed: {exc}") from None

    def _configs(self, resource: ConfigResource) -> dict[str, str]:
        return _configs(self._admin, resource, self.timeout_s)


def broker_limits(admin: AdminClient, timeout_s: float) -> BrokerLimits:
    """The bounds of one broker (a cluster's brokers share them in practice);
    ShareGroupsUnsupported when it has no share groups."""
    try:
        node = min(admin.list_topics(timeout=timeout_s).brokers)
    except KafkaException as exc:
        raise ShareGroupError(f"cannot list the brokers: {exc}") from None
    broker = _configs(admin, ConfigResource(ResourceType.BROKER, str(node)), timeout_s)
    try:
        return BrokerLimits(
            int(broker["group.share.delivery.count.limit"]),
            int(broker["group.share.min.record.lock.duration.ms"]),
            int(broker["group.share.max.record.lock.duration.ms"]),
        )
    except KeyError as missing:
        raise ShareGroupsUnsupported(
            f"the broker reports no {missing.args[0]}: it has no share groups (KIP-932 "
            "needs Apache Kafka 4.2 or later with share groups enabled)"
        ) from None


def _configs(admin: AdminClient, resource: ConfigResource, timeout_s: float) -> dict[str, str]:
    try:
        future = admin.describe_configs([resource], request_timeout=timeout_s)
        described = future[resource].result(timeout_s)
    except (KafkaException, TimeoutError) as exc:
        raise ShareGroupError(f"configs of {resource}: {exc}") from None
    return {name: entry.value for name, entry in described.items()}


def _member(m: Any) -> Member:
    topics = m.assignment.topic_partitions
    assigned = sorted((t.topic_name, p) for t in topics for p in t.partitions)
    return Member(m.member_id, m.client_id, m.client_host.lstrip("/"), tuple(assigned))


def _progress(partition: int, start: _Start, log_start: int, end: int) -> PartitionProgress:
    if start.offset is None:
        return PartitionProgress(partition, None, log_start, end, None, error=start.error)
    exact = start.lag >= 0
    lag = start.lag if exact else max(0, end - max(start.offset, log_start))
    return PartitionProgress(partition, start.offset, log_start, end, lag, exact, start.error)


def _alter_partition(partition: int, offset: int) -> Any:
    topic = AlterShareGroupOffsetsRequest.AlterShareGroupOffsetsRequestTopic
    return topic.AlterShareGroupOffsetsRequestPartition(
        partition_index=partition, start_offset=offset
    )


def _first_error(response: Any) -> int:
    if hasattr(response, "error_code"):
        return response.error_code
    return next((g.error_code for g in response.groups if g.error_code), 0)


def _coordinator_moved(code: int) -> bool:
    return code in (
        protocol_errors.NotCoordinatorError.errno,
        protocol_errors.CoordinatorNotAvailableError.errno,
        protocol_errors.CoordinatorLoadInProgressError.errno,
    )


def _error_text(code: int, message: str | None) -> str:
    name = protocol_errors.for_code(code).__name__
    return f"{name}: {message}" if message else name


def _raise_for(code: int, message: str | None, doing: str) -> None:
    if code:
        raise ShareGroupError(f"{doing}: {_error_text(code, message)}")
