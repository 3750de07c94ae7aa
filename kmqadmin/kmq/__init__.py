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
from .marker_writer import MarkerWriter
from .message import Message, TimestampType
from .producer import QueueProducer
from .share_client import NoRenew, ShareQueueClient, UnsettledMessages
from .stats import TrackerStats
from .tracker import RedeliveryTracker

__all__ = [
    "Backoff",
    "DeadLetters",
    "InFlight",
    "InFlightView",
    "LetterFilter",
    "Lifecycle",
    "LifecycleFinder",
    "MarkerWriter",
    "Message",
    "NoRenew",
    "QueueClient",
    "QueueConfig",
    "QueueGauges",
    "QueueProducer",
    "RedeliveryTracker",
    "ShareQueueClient",
    "TimestampType",
    "TrackerStats",
    "UnsettledMessages",
]
