"""A node's server.properties: the settings one node needs, those a cluster
of several needs, its logging, and reading back what a storage was
formatted with.

Written anew at every start (listener ports change per start); a kept data
dir's meta.properties says which node and cluster it was formatted for.
"""

from pathlib import Path

# One node: every internal topic at replication factor 1 and few partitions,
# so the first transaction, group join or share-group fetch does not wait
# for dozens of coordinator partitions to load.
SINGLE_NODE = {
    "offsets.topic.replication.factor": 1,
    "offsets.topic.num.partitions": 3,
    "transaction.state.log.replication.factor": 1,
    "transaction.state.log.min.isr": 1,
    "transaction.state.log.num.partitions": 3,
    "share.coordinator.state.topic.replication.factor": 1,
    "share.coordinator.state.topic.min.isr": 1,
    "share.coordinator.state.topic.num.partitions": 3,
    # Kafka's floor is 15 s; a queue on the embedded broker may time out sooner.
    "group.share.min.record.lock.duration.ms": 1000,
    # A new share consumer gets its assignment on its second heartbeat: 1 s
    # after it joins rather than Kafka's 5 s.
    "group.share.min.heartbeat.interval.ms": 1000,
    "group.share.heartbeat.interval.ms": 1000,
    # A killed share consumer keeps its assignment until its session ends:
    # 6 s, as for our consumer groups (kafka.client.config), not Kafka's 45 s.
    "group.share.min.session.timeout.ms": 6000,
    "group.share.session.timeout.ms": 6000,
    "group.initial.rebalance.delay.ms": 0,
    # A killed owner's open transaction holds back read_committed readers of
    # its partitions until it is aborted: once it outlives its timeout, at the
    # broker's next check, every 10 s by default; owners shorten their
    # transactions by this (kafka/ownership/transaction_timeout.py).
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": 1000,
    "num.partitions": 1,
    "default.replication.factor": 1,
    "min.insync.replicas": 1,
}

# Several nodes: what a production cluster needs (docs/production.md,
# "Production clusters"): every topic and internal log on three replicas, and a write
# acknowledged only once two hold it, so one node may die without losing an
# acknowledged record, a committed transaction or a group's offsets.
REPLICATED = SINGLE_NODE | {
    "offsets.topic.replication.factor": 3,
    "transaction.state.log.replication.factor": 3,
    "transaction.state.log.min.isr": 2,
    "share.coordinator.state.topic.replication.factor": 3,
    "share.coordinator.state.topic.min.isr": 2,
    "default.replication.factor": 3,
    "min.insync.replicas": 2,
    "unclean.leader.election.enable": "false",
}

LOG4J2 = """\
status = warn
appender.out.type = Console
appender.out.name = out
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = WARN
rootLogger.appenderRef.out.ref = out
logger.server.name = kafka.server.KafkaRaftServer
logger.server.level = INFO
"""


def write(path: Path, settings: dict[str, object]) -> None:
    """One ``key=value`` line a setting, as Kafka's Properties reads them."""
    path.write_text("".join(f"{key}={value}\n" for key, value in settings.items()))


def read(path: Path) -> dict[str, str]:
    """A properties file's settings (comments skipped), e.g. meta.properties."""
    pairs = (line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)
    return {key.strip(): value.strip() for key, value in pairs if not key.startswith("#")}
