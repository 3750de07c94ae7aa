"""Queue core: the kmq pattern on confluent-kafka. Imports nothing from Django.

from kmqadmin.kmq import QueueConfig, QueueProducer, QueueClient, RedeliveryTracker, Message
"""

from kmqadmin.kmq.backoff import Backoff
from kmqadmin.kmq.client.queue_client import QueueClient
from kmqadmin.kmq.config import QueueConfig
from kmqadmin.kmq.locks import AcksRefused, LockExpired
from kmqadmin.kmq.marker_writer import MarkerWriter
from kmqadmin.kmq.message import Message, TimestampType
from kmqadmin.kmq.producer import QueueProducer
from kmqadmin.kmq.readers.dead_letters import DeadLetters, LetterFilter
from kmqadmin.kmq.readers.gauges import QueueGauges
from kmqadmin.kmq.readers.inflight import InFlight, InFlightView
from kmqadmin.kmq.readers.lifecycle import Lifecycle, LifecycleFinder
from kmqadmin.kmq.share.client import ShareQueueClient
from kmqadmin.kmq.tracking.stats import TrackerStats
from kmqadmin.kmq.tracking.tracker import RedeliveryTracker

__all__ = [
    "AcksRefused",
    "Backoff",
    "DeadLetters",
    "InFlight",
    "InFlightView",
    "LetterFilter",
    "Lifecycle",
    "LifecycleFinder",
    "LockExpired",
    "MarkerWriter",
    "Message",
    "QueueClient",
    "QueueConfig",
    "QueueGauges",
    "QueueProducer",
    "RedeliveryTracker",
    "ShareQueueClient",
    "TimestampType",
    "TrackerStats",
]
