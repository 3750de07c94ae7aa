"""The topic browser: topics, records as written or masked, their renderings."""

from rest_framework import serializers


class TopicSerializer(serializers.Serializer):
    name = serializers.CharField()
    kind = serializers.CharField(
        help_text="what the topic is to kmqadmin: queue, dlq, markers, schedules, … or other"
    )


class BrowsedHeaderSerializer(serializers.Serializer):
    name = serializers.CharField()
    value = serializers.CharField(allow_null=True)
    encoding = serializers.ChoiceField(choices=["utf-8", "base64"])


class BrowsedRecordSerializer(serializers.Serializer):
    """A record as written, or masked for a masked audience; bytes that are
    not UTF-8 in base64, said by the field's encoding."""

    topic = serializers.CharField()
    partition = serializers.IntegerField()
    offset = serializers.IntegerField()
    timestamp_ms = serializers.IntegerField()
    key = serializers.CharField(allow_null=True)
    key_encoding = serializers.ChoiceField(choices=["utf-8", "base64"])
    value = serializers.CharField(allow_null=True)
    value_encoding = serializers.ChoiceField(choices=["utf-8", "base64"])
    headers = BrowsedHeaderSerializer(
        many=True,
        allow_null=True,
        help_text="in the record's order, a name may repeat; null when the header "
        "names do not decode (the record is undecodable; key and value still shown)",
    )


class RecordPageSerializer(serializers.Serializer):
    partitions = serializers.ListField(child=serializers.IntegerField())
    records = BrowsedRecordSerializer(
        many=True, help_text="oldest first forward, newest first backward"
    )
    start = serializers.IntegerField(help_text="the offset the seek resolved to")
    scanned = serializers.IntegerField(help_text="records read to find these")
    stopped = serializers.ChoiceField(
        choices=["end", "records", "scanned", "time"],
        help_text="what ended the read: the partition's end, a full page, or a cap "
        "(scanned, time): then there may be more to find from next_offset",
    )
    next_offset = serializers.IntegerField(
        allow_null=True, help_text="go on from here, same direction (start=offset)"
    )
    low = serializers.IntegerField(help_text="the partition's first offset")
    high = serializers.IntegerField(help_text="the partition's end offset")


class RenderingSerializer(serializers.Serializer):
    name = serializers.CharField()
    label = serializers.CharField()
    text = serializers.CharField()
    error = serializers.CharField(
        allow_blank=True, help_text="why it could not decode the record; text is then raw"
    )


class RecordDetailSerializer(serializers.Serializer):
    record = BrowsedRecordSerializer()
    renderings = RenderingSerializer(
        many=True, help_text="every rendering that applies, as the console shows them"
    )
    masked = serializers.BooleanField(help_text="shown masked, as your role sees this queue")
