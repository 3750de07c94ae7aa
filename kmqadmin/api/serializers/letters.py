"""A queue's DLQ: its letters and a redrive's edits."""

from rest_framework import serializers

from kmqadmin.api.serializers.payloads import headers_checked, payload
from kmqadmin.console.validators import given_text
from kmqadmin.kmq.draft import ENCODINGS


class RedriveEditsSerializer(serializers.Serializer):
    """What to send instead of the letter's own: each field given replaces
    it (headers: all the user's headers; kmq's own are the redrive's)."""

    value = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False)
    encoding = serializers.ChoiceField(choices=ENCODINGS, required=False)
    key = serializers.CharField(
        required=False, allow_null=True, trim_whitespace=False, validators=[given_text]
    )
    headers = serializers.DictField(
        child=serializers.CharField(trim_whitespace=False), required=False
    )

    def validate(self, attrs: dict) -> dict:
        """``edits``: the given fields as a Draft's (bytes)."""
        edits: dict = {}
        if "value" in attrs:
            edits["value"] = payload(attrs["value"], attrs.get("encoding", "utf-8"))
        elif "encoding" in attrs:
            raise serializers.ValidationError({"encoding": "an encoding needs a value"})
        if "key" in attrs:
            edits["key"] = None if attrs["key"] is None else attrs["key"].encode()
        if "headers" in attrs:
            headers_checked(attrs["headers"])
            edits["headers"] = tuple((n, v.encode()) for n, v in attrs["headers"].items())
        return {"edits": edits}


class LetterSerializer(serializers.Serializer):
    partition = serializers.IntegerField()
    offset = serializers.IntegerField()
    timestamp_ms = serializers.IntegerField(help_text="the message's own timestamp (produced)")
    dead_lettered_ms = serializers.IntegerField(
        allow_null=True,
        help_text="when the letter was written (its kmq-dlq-at header); null when the "
        "tracker that wrote it does not record it",
    )
    id = serializers.CharField(allow_null=True, help_text="kmq-id")
    reason = serializers.CharField(allow_null=True)
    detail = serializers.CharField(allow_null=True)
    key = serializers.CharField(allow_null=True)
    value = serializers.CharField(allow_null=True)
    encoding = serializers.ChoiceField(
        choices=["utf-8", "base64", "hex"],
        help_text="hex (key and value) when reason is undecodable: its headers do not decode",
    )
    headers = serializers.DictField(child=serializers.CharField())
    duplicate_of = serializers.IntegerField(
        allow_null=True,
        required=False,
        help_text="offset of an earlier letter in this page of the same failed record "
        "(same kmq-id and timestamp: the share backend moves to the DLQ at least once); "
        "a bulk redrive sends the message back once. null: none seen",
    )


class LetterPageSerializer(serializers.Serializer):
    partitions = serializers.ListField(child=serializers.IntegerField())
    results = LetterSerializer(many=True)
    next = serializers.IntegerField(allow_null=True, help_text="offset for ?from= (same partition)")
