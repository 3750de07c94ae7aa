"""SqsEndpoint: the SQS-compatible endpoint, in front of Django.

It is an ASGI app of its own, not a Django view: it must read the request
raw (what the client signed), answer at ``/`` as well as under ``/sqs``
(request.py), and hold no thread while a receive long-polls, which Django's
synchronous middleware would make it do. Everything else goes on to
Django.

Each request: its signature verified (signature.py) against the secret of
its access key (console/services/sqs_keys.py), the key's user's role
checked for the action (actions.py), the action run, and the result or
the error answered as SQS words it (errors.py). No input gets a 500: an
unexpected failure is logged with the request id and answered as SQS's
InternalError.
"""

import asyncio
import functools
import inspect
import logging
import uuid
from collections.abc import Awaitable
from datetime import UTC, datetime
from email.utils import formatdate
from types import ModuleType
from typing import Any

from confluent_kafka import KafkaException
from django.conf import settings

from kmqadmin.console.services import sqs_keys
from kmqadmin.console.services.roles import Role, role_of
from kmqadmin.kafka.client.checked_producer import OutcomeUnknown
from kmqadmin.kafka.client.errors import KafkaSetupError
from kmqadmin.sqs.actions.catalog import action_for
from kmqadmin.sqs.auth.caller import Caller
from kmqadmin.sqs.auth.remembered import remembered
from kmqadmin.sqs.auth.signature import SignatureError, verify
from kmqadmin.sqs.protocol import json_protocol, query_protocol
from kmqadmin.sqs.protocol.errors import Answer, SqsError, service_unavailable
from kmqadmin.sqs.request import base_url, incoming, is_sqs
from kmqadmin.sqs.threads import in_thread

log = logging.getLogger(__name__)

# A 1 MiB message JSON-escaped by an SDK can come to about 3 MiB.
MAX_BODY_BYTES = 4 * 1024 * 1024

Scope = dict[str, Any]


class SqsEndpoint:
    def __init__(self, app: Any) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not is_sqs(scope):
            await self._app(scope, receive, send)
            return
        answering = asyncio.ensure_future(respond(scope, await _body(receive)))
        hung_up = asyncio.ensure_future(_disconnected(receive))
        await asyncio.wait({answering, hung_up}, return_when=asyncio.FIRST_COMPLETED)
        if not answering.done():  # the client left: a receive gives back what it got
            answering.cancel()
            await asyncio.gather(answering, return_exceptions=True)
            return
        hung_up.cancel()
        answer = answering.result()
        headers = [
            *((name.lower().encode(), value.encode()) for name, value in answer.headers),
            (b"content-length", str(len(answer.body)).encode()),
            (b"date", formatdate(usegmt=True).encode()),  # SDKs correct their clock skew by it
        ]
        await send({"type": "http.response.start", "status": answer.status, "headers": headers})
        await send({"type": "http.response.body", "body": answer.body})


async def respond(scope: Scope, body: bytes | None) -> Answer:
    request_id = str(uuid.uuid4())
    request = incoming(scope, body or b"")
    protocol = query_protocol if query_protocol.is_query(request) else json_protocol
    try:
        if body is None:
            raise SqsError(
                "InvalidParameterValueException",
                f"The request is longer than {MAX_BODY_BYTES} bytes.",
                code="InvalidParameterValue",
            )
        name, result = await in_thread(_called, request, scope, protocol)
        if inspect.isawaitable(result):  # a receive's wait: on the loop, holding no thread
            result = await result
    except SignatureError as exc:
        return _error(protocol, SqsError.of_signature(exc), request_id)
    except SqsError as exc:
        return _error(protocol, exc, request_id)
    except OutcomeUnknown as exc:
        reason = (
            f"{exc}. A send may be on the queue or not: look the message up in the console "
            "before sending it again; a delete or visibility change may be sent again."
        )
        return _error(protocol, service_unavailable(reason), request_id)
    except (KafkaException, KafkaSetupError) as exc:
        log.warning("SQS request %s: Kafka did not answer: %s", request_id, exc)
        reason = f"Kafka did not answer ({exc}); nothing was changed unless the audit log says so."
        return _error(protocol, service_unavailable(reason), request_id)
    except Exception:
        log.exception("SQS request %s failed", request_id)
        failed = SqsError(
            "InternalError",
            f"The request failed on our side; request id {request_id} is in the web log.",
            status=500,
            sender=False,
        )
        return _error(protocol, failed, request_id)
    if protocol is query_protocol:
        return query_protocol.answer(name, result, request_id)
    return json_protocol.answer(result, request_id)


def _error(protocol: ModuleType, error: SqsError, request_id: str) -> Answer:
    return error.as_xml(request_id) if protocol is query_protocol else error.as_json(request_id)


def _called(
    request: Any, scope: Scope, protocol: ModuleType
) -> tuple[str, dict[str, Any] | Awaitable[dict[str, Any]]]:
    """On a pool thread: the signature checked, the request read and the
    action run, in one handover between threads rather than two (on 2 cores
    each is a wait for the GIL). An action that waits (a receive) hands back
    what is left of it to await on the loop."""
    caller = _caller(request, base_url(scope))
    name, params = protocol.parse(request)
    if protocol is query_protocol and scope["path"].count("/") >= 3:
        params.setdefault("QueueUrl", scope["path"])  # posted to the queue's URL
    return name, action_for(name, caller)(params, caller)


async def _disconnected(receive: Any) -> None:
    """Returns when the client hangs up (a long poll may outlast it)."""
    while (await receive())["type"] != "http.disconnect":
        pass


def _caller(request: Any, url: str) -> Caller:
    """Who signed the request: the key's user, with the user's role."""
    keys = functools.cache(_key)  # one answer all through the request
    key_id = verify(
        request,
        lambda k: found[0].secret if (found := keys(k)) else None,
        datetime.now(UTC),
        settings.KMQ_SQS_REGION,
    )
    key, role = keys(key_id)  # type: ignore[misc]  # verified: it is active
    return Caller(key.user, role, key_id, url)


def _key(key_id: str) -> tuple[sqs_keys.ActiveKey, Role] | None:
    def find() -> tuple[sqs_keys.ActiveKey, Role] | None:
        key = sqs_keys.active(key_id)
        return None if key is None else (key, role_of(key.user))

    return remembered(("key", key_id), find)


async def _body(receive: Any) -> bytes | None:
    """The whole body, or None past MAX_BODY_BYTES (read no further)."""
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return b"".join(chunks)
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            return None
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks)
