"""A record to write as a request gives it: value as text, JSON or base64,
key, headers; shared by enqueue, schedules and a redrive with edits."""

from rest_framework import serializers

from kmqadmin.console.validators import given_text
from kmqadmin.kmq.draft import ENCODINGS, decode_value
from kmqadmin.kmq.given_headers import BadInput, check_headers


class PayloadSerializer(serializers.Serializer):
    """A record to write: value as text, JSON (checked, sent as written) or
    base64, key, headers."""

    value = serializers.CharField(allow_blank=True, trim_whitespace=False)
    encoding = serializers.ChoiceField(choices=ENCODINGS, default="utf-8")
    key = serializers.CharField(
        required=False, allow_null=True, trim_whitespace=False, validators=[given_text]
    )
    headers = serializers.DictField(
        child=serializers.CharField(trim_whitespace=False), default=dict
    )

    def validate(self, attrs: dict) -> dict:
        attrs["payload"] = payload(attrs["value"], attrs["encoding"])
        headers_checked(attrs["headers"])
        return attrs


def payload(value: str, encoding: str) -> bytes:
    """The value's bytes; a 400 under ``value`` saying why it does not decode."""
    try:
        return decode_value(value, encoding)
    except BadInput as exc:
        raise serializers.ValidationError({"value": str(exc)}) from None


def headers_checked(headers: dict[str, str]) -> None:
    """A 400 under ``headers`` for one a producer may not write (kmq's own...)."""
    try:
        check_headers(headers)
    except BadInput as exc:
        raise serializers.ValidationError({"headers": str(exc)}) from None
