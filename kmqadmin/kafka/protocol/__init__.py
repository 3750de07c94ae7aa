"""The KIP-932 share-group admin messages kafka-python's wheel has no schemas
for, built from our own schema files beside this module (only the versions
Apache Kafka 4.2 speaks that we use)."""

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
