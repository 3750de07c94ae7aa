"""The "decoded by schema" rendering of a record, for every page that shows one.

A cluster with a schema registry shows each record's value (and a framed key)
as its writer schema reads it; when that cannot be done the page says why and
keeps its raw rendering. Nothing here raises: a missing password, a registry
that is down or a corrupt record is a reason on the page, never a 500.
"""

from dataclasses import dataclass

from kmqadmin.console.models import Cluster
from kmqadmin.kafka.client import json_payload
from kmqadmin.kafka.client.errors import ClusterSettingError
from kmqadmin.kafka.inspect.payload_masking import MaskRules
from kmqadmin.kafka.inspect.schema_decoding import MAGIC_BYTE, Decoded, decoder_for


@dataclass(frozen=True)
class SchemaRendering:
    """What a page shows: ``value`` and ``key`` decoded (``key`` None when the
    key is not framed for a registry)."""

    value: Decoded
    key: Decoded | None = None
    masking: MaskRules | None = None  # applied to the decoded value and key

    @property
    def label(self) -> str:
        if not self.value.ok:
            return f"raw: not decoded by schema ({self.value.fallback})"
        return f"decoded by schema: {self.value.schema_type}, schema id {self.value.schema_id}"

    @property
    def text(self) -> str:
        """The decoded value, pretty-printed JSON ("" when not decoded)."""
        if not self.value.ok:
            return ""
        if self.masking is None:
            return _pretty(self.value.value)
        return self.masking.text(_pretty(self.masking.document(self.value.value)))

    @property
    def key_text(self) -> str:
        if self.key is None or not self.key.ok:
            return ""
        text = _pretty(self.key.value)
        return text if self.masking is None else self.masking.text(text)


def schema_rendering(
    cluster: Cluster,
    value: bytes | None,
    key: bytes | None = None,
    masking: MaskRules | None = None,
) -> SchemaRendering | None:
    """A record of ``cluster`` decoded by its schema; None when the cluster
    names no schema registry (the page shows only its raw renderings).
    Decoded from the clear bytes (a masked payload is no longer framed),
    then masked by ``masking`` when given."""
    try:
        settings = cluster.schema_registry()
    except ClusterSettingError as exc:
        return SchemaRendering(Decoded(fallback=f"schema registry credentials: {exc}"))
    if settings is None:
        return None
    decoder = decoder_for(settings)
    framed_key = key is not None and key[:1] == bytes([MAGIC_BYTE])
    return SchemaRendering(
        value=decoder.decode(value),
        key=decoder.decode(key) if framed_key else None,
        masking=masking,
    )


def _pretty(value: object) -> str:
    try:
        return json_payload.pretty(value)
    except ValueError as exc:
        return str(exc)
