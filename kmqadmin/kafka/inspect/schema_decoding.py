"""Payloads framed for a schema registry, decoded to JSON-able values.

Producers that use a schema registry (Confluent's serializers, Apicurio's
Confluent-compatible ones) frame each key and value as a zero magic byte, a
4-byte schema id and the Avro, Protobuf or JSON Schema encoding. The console
shows such a record as what it means rather than as bytes, and when it
cannot, says why and shows the bytes: decoding never raises into a page.

confluent-kafka's schema_registry module does the work (its registry client,
which caches schemas by id, and its Avro and JSON Schema deserializers). Its
Protobuf deserializer needs the producer's generated class, which a console
never has, so Protobuf records are parsed with a message class built from the
writer schema the registry holds, in either form a registry serves it: a
base64 FileDescriptorProto (Confluent's ``format=serialized``) or .proto text
(compiled with protoc from grpcio-tools).

Its libraries are the ``[schemas]`` extra (the console brings it): a
service using only the queue and scheduler cores never imports this module.
"""

import base64
import binascii
import datetime
import decimal
import functools
import io
import logging
import tempfile
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer
from confluent_kafka.schema_registry.common._httpx_compat import httpx
from confluent_kafka.schema_registry.common.protobuf import _init_pool
from confluent_kafka.schema_registry.error import SchemaRegistryError
from confluent_kafka.schema_registry.json_schema import JSONDeserializer
from confluent_kafka.schema_registry.serde import SchemaId
from google.protobuf import descriptor_pb2, json_format
from google.protobuf.descriptor import Descriptor, FileDescriptor
from google.protobuf.descriptor_pool import DescriptorPool
from google.protobuf.message import DecodeError
from google.protobuf.message_factory import GetMessageClass

from kmqadmin.kafka.inspect.registry_settings import RegistrySettings

log = logging.getLogger(__name__)

MAGIC_BYTE = 0
NOT_FRAMED = "not framed for a schema registry (no zero magic byte and 4-byte schema id)"
# A page decodes up to a few hundred records: one that cannot reach the
# registry must not wait for it on each, so a failed call is remembered
# (the request's own bound is registry_settings.REQUEST_TIMEOUT_S).
DOWN_FOR_S = 15.0
# protoc runs in our process (grpcio-tools): one compile at a time.
_PROTOC = threading.Lock()


@dataclass(frozen=True)
class Decoded:
    """A payload decoded by its schema, or why it was not (``fallback``)."""

    value: Any = None
    schema_id: int | None = None
    schema_type: str = ""
    fallback: str = ""

    @property
    def ok(self) -> bool:
        return not self.fallback


class _Unreachable(Exception):
    """The registry did not answer; the message says how."""


class SchemaDecoder:
    """Decodes the payloads of one registry's producers; cheap to keep, as
    every schema it fetched stays cached in its client."""

    def __init__(self, settings: RegistrySettings):
        self.settings = settings
        self._client = SchemaRegistryClient(dict(settings.client_config()))
        by_id_only = {"subject.name.strategy": _no_subject}
        self._avro = AvroDeserializer(self._client, conf=by_id_only)
        self._json = JSONDeserializer(None, schema_registry_client=self._client, conf=by_id_only)
        self._protobuf = _ProtobufFiles(self._client)
        self._down_until = 0.0
        self._down_reason = ""
        self._decoded_ids: set[int] = set()  # all cached: decoded while the registry is down

    def decode(self, data: bytes | None) -> Decoded:
        """``data`` (a key or a value) as its writer schema reads it. No subject
        is looked up: the schema id in the frame names the writer schema, and a
        console runs no read rules or migrations."""
        if not data or len(data) < 5 or data[0] != MAGIC_BYTE:
            return Decoded(fallback=NOT_FRAMED)
        schema_id = int.from_bytes(data[1:5], "big")
        cached = schema_id in self._decoded_ids
        try:
            schema = self._call(cached, self._client.get_schema, schema_id)
        except _Unreachable as exc:
            return Decoded(schema_id=schema_id, fallback=str(exc))
        except SchemaRegistryError as exc:
            return Decoded(schema_id=schema_id, fallback=_registry_refusal(schema_id, exc))
        kind = schema.schema_type or "AVRO"
        try:  # jsonable recurses: a deeply nested value raises RecursionError here too
            value = jsonable(self._deserialize(cached, kind, data))
        except _Unreachable as exc:
            return Decoded(schema_id=schema_id, schema_type=kind, fallback=str(exc))
        except Exception as exc:
            log.info("schema id %s (%s) did not decode a record: %r", schema_id, kind, exc)
            return Decoded(
                schema_id=schema_id,
                schema_type=kind,
                fallback=f"decode error ({kind}): {str(exc) or type(exc).__name__}",
            )
        self._decoded_ids.add(schema_id)
        return Decoded(value=value, schema_id=schema_id, schema_type=kind)

    def _deserialize(self, cached: bool, kind: str, data: bytes) -> Any:
        if kind == "PROTOBUF":
            return self._call(cached, self._protobuf.decode, data)
        return self._call(cached, self._json if kind == "JSON" else self._avro, data)

    def _call(self, cached: bool, fn, *args):
        """``fn(*args)``, a registry that does not answer turned into _Unreachable,
        and remembered for DOWN_FOR_S so the next records do not wait on it (but
        records of a ``cached`` schema id, which need no registry, still decode)."""
        if not cached and time.monotonic() < self._down_until:
            raise _Unreachable(self._down_reason)
        try:
            return fn(*args)
        except httpx.TransportError as exc:
            self._down_reason = f"schema registry unreachable at {self.settings.url}: {exc}"
            self._down_until = time.monotonic() + DOWN_FOR_S
            raise _Unreachable(self._down_reason) from None


def _no_subject(ctx: object, record_name: str | None) -> None:
    """The deserializers' subject strategy: none, so no subject (nor its latest
    version, rules or migrations) is looked up; the frame's id names the schema."""
    return None


def _registry_refusal(schema_id: int, exc: SchemaRegistryError) -> str:
    if exc.http_status_code == 404:
        return f"unknown schema id {schema_id}: the registry has no such schema"
    status = f"HTTP {exc.http_status_code} {exc.error_message}"
    return f"schema registry refused schema id {schema_id}: {status}"


@functools.lru_cache(maxsize=32)
def decoder_for(settings: RegistrySettings) -> SchemaDecoder:
    """One decoder per registry (and credentials) per process, so its caches are shared."""
    return SchemaDecoder(settings)


def jsonable(value: Any) -> Any:
    """A decoded value as JSON can hold it: Avro's bytes, decimals, dates and
    UUIDs become strings (bytes as base64)."""
    if isinstance(value, Mapping):
        return {str(key): jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(item) for item in value]
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, decimal.Decimal | uuid.UUID):
        return str(value)
    return value


class _ProtobufFiles:
    """Protobuf writer schemas by id, built into descriptor pools once."""

    def __init__(self, client: SchemaRegistryClient):
        self._client = client
        self._files: dict[int, FileDescriptor] = {}

    def decode(self, data: bytes) -> dict[str, Any]:
        frame = SchemaId("PROTOBUF")
        payload = frame.from_bytes(io.BytesIO(data))
        assert frame.id is not None
        message = GetMessageClass(_message_at(self._file(frame.id), frame.message_indexes or [0]))()
        message.ParseFromString(payload.read())
        return json_format.MessageToDict(message, preserving_proto_field_name=True)

    def _file(self, schema_id: int) -> FileDescriptor:
        if schema_id not in self._files:
            schema = self._client.get_schema(schema_id, fmt="serialized")
            sources = {f"schema-{schema_id}.proto": schema.schema_str or ""}
            sources |= self._references(schema)
            main = next(iter(sources))
            self._files[schema_id] = _pool(sources).FindFileByName(main)
        return self._files[schema_id]

    def _references(self, schema: Schema) -> dict[str, str]:
        found: dict[str, str] = {}
        for ref in schema.references or []:
            referenced = self._client.get_version(ref.subject, ref.version, fmt="serialized").schema
            found[ref.name] = referenced.schema_str or ""
            found |= self._references(referenced)
        return found


def _pool(sources: dict[str, str]) -> DescriptorPool:
    """A pool holding every file of ``sources`` (name to schema string), the
    imported ones added first."""
    pool = DescriptorPool()
    serialized = [_serialized(name, text) for name, text in sources.items()]
    if all(proto is not None for proto in serialized):
        # Google's well-known types and Confluent's own, which a schema
        # imports without listing them as references.
        _init_pool(pool)
        protos = list(reversed(serialized))
    else:
        protos = _compiled(sources)
    for proto in protos:
        pool.Add(proto)
    return pool


def _serialized(name: str, text: str) -> descriptor_pb2.FileDescriptorProto | None:
    """``text`` as a base64 FileDescriptorProto (renamed ``name``), or None if it is not one."""
    try:
        raw = base64.b64decode(text, validate=True)
        proto = descriptor_pb2.FileDescriptorProto.FromString(raw)
    except (binascii.Error, ValueError, DecodeError):
        return None
    proto.name = name
    return proto


def _compiled(sources: dict[str, str]) -> list[descriptor_pb2.FileDescriptorProto]:
    """.proto texts compiled by protoc, with Google's well-known types at hand."""
    import grpc_tools
    from grpc_tools import protoc

    well_known = Path(grpc_tools.__file__).parent / "_proto"
    with _PROTOC, tempfile.TemporaryDirectory(prefix="kmq-proto-") as folder:
        root = Path(folder)
        for name, text in sources.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text)
        out = root / "descriptor-set.pb"
        args = ["protoc", f"-I{root}", f"-I{well_known}", f"--descriptor_set_out={out}"]
        if protoc.main([*args, "--include_imports", next(iter(sources))]) != 0:
            raise ValueError("protoc could not compile the registry's .proto schema")
        return list(descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes()).file)


def _message_at(file: FileDescriptor, indexes: list[int]) -> Descriptor:
    """The message the frame's message indexes point at (top-level, then nested)."""
    found = list(file.message_types_by_name.values())[indexes[0]]
    for index in indexes[1:]:
        found = found.nested_types[index]
    return found
