"""Queue core: the kmq pattern on confluent-kafka. Imports nothing from Django.

from kmqadmin.kmq import QueueConfig, QueueProducer, QueueClient, RedeliveryTracker, Message
"""

from .backoff import Backoff
from .client import QueueClient
from .config import QueueConfig
from .dead_letters import DeadLetters, LetterFilter
from .gauges import QueueGauges
from .inflight import InFlight, InFlightView
from .lifecycle import Lifecycle, LifecycleFinder
from .locks import AcksRefused, LockExpired
from .marker_writer import MarkerWriter
from .message import Message, TimestampType
from .producer import QueueProducer
from .share_client import ShareQueueClient
from .stats import TrackerStats
from .tracker import RedeliveryTracker

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
