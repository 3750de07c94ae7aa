"""Whether a consumer has read its assigned partitions to their end.

An empty consume() says nothing: a fresh consumer's first fetch, or a busy
broker, can take longer than the wait, and a view that took the silence for
the end showed an empty topic that was not. The end is what the consumer's
last fetch reported (the cached watermark), so asking costs no round trip; a
record written since comes with the next read, as it would have after a
wait that ended before it.
"""

from collections.abc import Iterable

from confluent_kafka import Consumer, TopicPartition


def caught_up(consumer: Consumer, partitions: Iterable[TopicPartition]) -> bool:
    """True when every partition's position is at the end its last fetch
    reported; False before the first fetch of any of them. A partition
    with nothing in it has no position (librdkafka moves it only past what
    it fetched, markers and aborted records included): it is at its end
    when its start is its end."""
    for tp in consumer.position(list(partitions)):
        low, high = consumer.get_watermark_offsets(tp, cached=True)
        if high < 0:
            return False  # not fetched yet
        if low != high and tp.offset < high:  # -1001 (none consumed) included
            return False
    return True
