"""Schema-registry decoding against a real registry (Apicurio, Confluent API):
each format decoded, and each reason a record falls back to raw."""

import base64
import datetime
import time

from confluent_kafka.schema_registry import Schema
from confluent_kafka.serialization import MessageField

from kmqadmin.kafka.embedded.broker import free_port
from kmqadmin.kafka.inspect.schema_decoding import (
    NOT_FRAMED,
    RegistrySettings,
    SchemaDecoder,
    decoder_for,
)
from tests.fixtures.schemas import Framing
from tests.schema_registry import CCOMPAT, SchemaRegistryServer

ORDER = {"id": 7, "item": "book", "price": "12.50", "tags": ["gift", "paper"]}


def _order() -> dict:
    import decimal

    return ORDER | {"price": decimal.Decimal("12.50")}


def test_avro_protobuf_and_json_schema_records_decode_to_json_values(
    schema_registry: SchemaRegistryServer, framing: Framing, topic: str
) -> None:
    decoder = SchemaDecoder(RegistrySettings(schema_registry.url))
    avro = decoder.decode(framing.avro(topic, _order()))
    assert (avro.fallback, avro.schema_type, avro.value) == ("", "AVRO", ORDER)

    shipped = datetime.datetime(2026, 11, 24, 1, 2, 3, tzinfo=datetime.UTC)
    record = framing.protobuf(
        topic, id=9, destination="Oslo", shipped_at=shipped, parcels=[{"label": "a"}]
    )
    protobuf = decoder.decode(record)
    assert (protobuf.fallback, protobuf.schema_type) == ("", "PROTOBUF")
    assert protobuf.value == {
        "id": 9,
        "destination": "Oslo",
        "shipped_at": "2026-11-24T01:02:03Z",
        "parcels": [{"label": "a"}],
    }

    json_schema = decoder.decode(framing.json(topic, {"name": "pen", "qty": 3}))
    assert (json_schema.fallback, json_schema.schema_type) == ("", "JSON")
    assert json_schema.value == {"name": "pen", "qty": 3}

    key = decoder.decode(framing.avro(topic, _order(), MessageField.KEY))
    assert key.value == ORDER


def test_records_that_cannot_be_decoded_say_why(
    schema_registry: SchemaRegistryServer, framing: Framing, topic: str
) -> None:
    decoder = SchemaDecoder(RegistrySettings(schema_registry.url))
    for unframed in (None, b"", b"plain text", b'{"a": 1}', b"\x00\x00\x01"):
        assert decoder.decode(unframed).fallback == NOT_FRAMED, unframed
    unknown = decoder.decode(b"\x00\x00\x0f\x42\x3f" + b"payload")
    assert unknown.schema_id == 999_999
    assert unknown.fallback == "unknown schema id 999999: the registry has no such schema"
    truncated = framing.avro(topic, _order())[:7]
    broken = decoder.decode(truncated)
    assert broken.schema_type == "AVRO" and broken.fallback.startswith("decode error (AVRO): ")
    invalid = framing.json(topic, {"name": "pen", "qty": 3}).replace(b"3", b'"three"')
    refused = decoder.decode(invalid)
    assert refused.fallback.startswith("decode error (JSON): "), refused
    # Valid JSON, but nested past the stack its JSON-able copy walks: that raised.
    nested = Schema('{"type": "object", "properties": {"a": {"type": "array"}}}', "JSON")
    schema_id = framing.client.register_schema(f"{topic}-deep", nested)
    value = b'{"a": ' + b"[" * 5000 + b"]" * 5000 + b"}"
    deep = decoder.decode(b"\x00" + schema_id.to_bytes(4, "big") + value)
    assert deep.fallback.startswith("decode error (JSON): "), deep


def test_a_registry_that_is_down_is_a_reason_and_cached_schemas_still_decode(
    framing: Framing, topic: str
) -> None:
    with SchemaRegistryServer() as own:
        decoder = SchemaDecoder(RegistrySettings(own.url))
        known = Framing(own).avro(topic, _order())
        assert decoder.decode(known).value == ORDER
        newer = Framing(own).json(topic, {"name": "pen", "qty": 3})
    assert decoder.decode(known).value == ORDER  # its schema was cached
    down = decoder.decode(newer)
    assert down.fallback.startswith(f"schema registry unreachable at {own.url}: "), down
    started = time.monotonic()
    assert decoder.decode(newer) == down
    assert time.monotonic() - started < 0.05  # remembered, not asked again per record
    assert decoder.decode(known).value == ORDER  # while down, cached schemas still serve

    nobody = SchemaDecoder(RegistrySettings(f"http://127.0.0.1:{free_port()}{CCOMPAT}"))
    assert nobody.decode(known).fallback.startswith("schema registry unreachable at ")


def test_credentials_are_sent_as_basic_auth_and_never_shown(
    schema_registry: SchemaRegistryServer, framing: Framing, topic: str
) -> None:
    """Apicurio 2.1 checks credentials only through an OIDC server (Keycloak),
    which these machines cannot run: here the credentials are proven to reach
    the client's settings, hidden from every printout, and not to break
    decoding against a registry that ignores them."""
    settings = RegistrySettings(schema_registry.url, "reader", "s3cret")
    config = settings.client_config()
    assert config["basic.auth.user.info"] == "reader:s3cret"
    assert "s3cret" not in repr(config) and "s3cret" not in repr(settings)
    decoder = decoder_for(settings)
    assert decoder is decoder_for(RegistrySettings(schema_registry.url, "reader", "s3cret"))
    assert decoder.decode(framing.avro(topic, _order())).value == ORDER


def test_protobuf_schemas_read_the_same_as_text_or_as_confluents_serialized_form() -> None:
    """Confluent's registry serves Protobuf schemas (format=serialized) as a
    base64 FileDescriptorProto, Apicurio as .proto text: both build the same
    message type."""
    from google.protobuf import descriptor_pb2

    from kmqadmin.kafka.inspect.schema_decoding import _pool
    from tests.fixtures.schemas import SHIPMENT_PROTO

    from_text = _pool({"s.proto": SHIPMENT_PROTO}).FindFileByName("s.proto")
    proto = descriptor_pb2.FileDescriptorProto()
    from_text.CopyToProto(proto)
    serialized = base64.b64encode(proto.SerializeToString()).decode()
    # Its import of google/protobuf/timestamp.proto is no reference: the
    # well-known types are at hand, as Confluent's serializers assume.
    from_serialized = _pool({"s.proto": serialized}).FindFileByName("s.proto")
    fields = [
        [(f.name, f.number, f.type) for f in file.message_types_by_name["Shipment"].fields]
        for file in (from_text, from_serialized)
    ]
    assert fields[0] == fields[1] and len(fields[0]) == 4
