"""The KIP-932 share-group messages kafka-python's wheel has no schemas for,
built from our own schema files beside this module (only the versions we
use): the admin calls, and the share consumer's heartbeat, fetch and
acknowledge (version 2 of the last two needs Apache Kafka 4.3+). Its module
``config`` turns a librdkafka configuration into kafka-python's, so these
calls reach the cluster as every other client does.

May import kmqadmin.kafka.client only."""

from kafka.protocol.api_message import ApiMessage

_HERE = __name__


class ShareGroupDescribeRequest(ApiMessage, load_json=_HERE):
    pass


class ShareGroupDescribeResponse(ApiMessage, load_json=_HERE):
    pass


class DescribeShareGroupOffsetsRequest(ApiMessage, load_json=_HERE):
    pass


class DescribeShareGroupOffsetsResponse(ApiMessage, load_json=_HERE):
    pass


class AlterShareGroupOffsetsRequest(ApiMessage, load_json=_HERE):
    pass


class AlterShareGroupOffsetsResponse(ApiMessage, load_json=_HERE):
    pass


class ShareGroupHeartbeatRequest(ApiMessage, load_json=_HERE):
    pass


class ShareGroupHeartbeatResponse(ApiMessage, load_json=_HERE):
    pass


class ShareFetchRequest(ApiMessage, load_json=_HERE):
    pass


class ShareFetchResponse(ApiMessage, load_json=_HERE):
    pass


class ShareAcknowledgeRequest(ApiMessage, load_json=_HERE):
    pass


class ShareAcknowledgeResponse(ApiMessage, load_json=_HERE):
    pass
