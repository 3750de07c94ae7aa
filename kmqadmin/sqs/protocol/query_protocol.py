"""SQS's query protocol, the one SDKs spoke until 2023 and some still do:
``Action=<Action>`` and the parameters as a form (or, for a presigned
``GET``, the query string), answered in XML.

A parameter list or map is flattened into numbered names
(``AttributeName.1``, ``Attribute.1.Name`` / ``Attribute.1.Value``,
``SendMessageBatchRequestEntry.2.MessageAttribute.1.Value.StringValue``).
``parse`` folds them back into the shape the JSON protocol sends, so every
action reads one shape; ``answer`` flattens a result the same way, with the
element names of SQS's query model.
"""

import re
from typing import Any
from urllib.parse import parse_qsl

from kmqadmin.sqs.auth.signature import SignedRequest
from kmqadmin.sqs.protocol.errors import XML_CONTENT_TYPE, XML_NAMESPACE, Answer, SqsError, xml_text

# Flattened lists: the name in the query, the name in the JSON shape.
LISTS = {
    "AttributeName": "AttributeNames",
    "MessageAttributeName": "MessageAttributeNames",
    "MessageAttributeNames": "MessageAttributeNames",  # kombu writes the plural
    "MessageSystemAttributeName": "MessageSystemAttributeNames",
    "MessageSystemAttributeNames": "MessageSystemAttributeNames",
    "TagKey": "TagKeys",
    "AWSAccountId": "AWSAccountIds",
    "ActionName": "Actions",
    "SendMessageBatchRequestEntry": "Entries",
    "DeleteMessageBatchRequestEntry": "Entries",
    "ChangeMessageVisibilityBatchRequestEntry": "Entries",
}
# Flattened maps: the name in the query, the name in the JSON shape, and
# the names of an entry's key and value.
MAPS = {
    "Attribute": ("Attributes", "Name", "Value"),
    "Tag": ("tags", "Key", "Value"),  # CreateQueue's; TagQueue's is "Tags" (parse)
    "MessageAttribute": ("MessageAttributes", "Name", "Value"),
    "MessageSystemAttribute": ("MessageSystemAttributes", "Name", "Value"),
}
INTEGERS = {
    "MaxNumberOfMessages", "WaitTimeSeconds", "VisibilityTimeout", "DelaySeconds", "MaxResults",
    "MaxNumberOfMessagesPerSecond",
}  # fmt: skip
# What a result's lists and maps are called in XML.
LIST_ELEMENTS = {
    "QueueUrls": "QueueUrl",
    "queueUrls": "QueueUrl",
    "Messages": "Message",
    "Failed": "BatchResultErrorEntry",
    "Results": "ListMessageMoveTasksResultEntry",
}
MAP_ELEMENTS = {
    "Attributes": ("Attribute", "Name", "Value"),
    "Tags": ("Tag", "Key", "Value"),
    "MessageAttributes": ("MessageAttribute", "Name", "Value"),
}
# Actions whose answer has no result element.
NO_RESULT = {
    "ChangeMessageVisibility", "DeleteMessage", "DeleteQueue", "PurgeQueue",
    "SetQueueAttributes", "TagQueue", "UntagQueue", "AddPermission", "RemovePermission",
}  # fmt: skip
FORM = "application/x-www-form-urlencoded"
INTEGER = re.compile(r"-?[0-9]{1,10}")
INDEX = re.compile(r"[0-9]{1,4}")
MAX_DEPTH = 8  # SendMessageBatchRequestEntry.1.MessageAttribute.1.Value.StringValue is 6


def is_query(request: SignedRequest) -> bool:
    """A request in the query protocol: anything without an SQS JSON target."""
    return not (request.header("x-amz-target") or "").startswith("AmazonSQS.")


def parse(request: SignedRequest) -> tuple[str, dict[str, Any]]:
    """The action and its parameters in the JSON protocol's shape."""
    pairs = parse_qsl(request.query, keep_blank_values=True)
    if request.method == "POST" and (request.header("content-type") or FORM).startswith(FORM):
        try:
            pairs += parse_qsl(
                request.body.decode("utf-8"), keep_blank_values=True, strict_parsing=False
            )
        except UnicodeDecodeError as exc:
            raise SqsError("MalformedQueryString", f"the form is not UTF-8: {exc}") from exc
    flat = {key: value for key, value in pairs if not key.startswith("X-Amz-")}
    action = flat.pop("Action", "")
    if not action:
        raise SqsError("MissingAction", "The request must contain the parameter Action.")
    flat.pop("Version", None)
    params = fold(flat)
    if action == "TagQueue" and "tags" in params:  # the same Tag.N, named apart in JSON
        params["Tags"] = params.pop("tags")
    return action, params


def fold(flat: dict[str, str]) -> dict[str, Any]:
    """``{"Attribute.1.Name": "A", "Attribute.1.Value": "1"}`` → ``{"Attributes": {"A": "1"}}``."""
    tree: dict[str, Any] = {}
    for key, value in flat.items():
        node = tree
        *parents, last = key.split(".")
        if len(parents) >= MAX_DEPTH:
            raise SqsError("MalformedQueryString", f"parameter {key[:100]!r} is nested too deep")
        for part in parents:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise SqsError(
                    "MalformedQueryString", f"parameter {key[:100]!r} clashes with another"
                )
        if isinstance(node.get(last), dict):
            raise SqsError("MalformedQueryString", f"parameter {key[:100]!r} clashes with another")
        node[last] = value
    return _shape(tree)


def _shape(tree: dict[str, Any]) -> dict[str, Any]:
    shaped: dict[str, Any] = {}
    for name, value in tree.items():
        if name in LISTS and isinstance(value, dict):
            items = [_shape(v) if isinstance(v, dict) else v for v in _numbered(name, value)]
            shaped.setdefault(LISTS[name], []).extend(items)
        elif name in MAPS and isinstance(value, dict):
            json_name, key_name, value_name = MAPS[name]
            entries = shaped.setdefault(json_name, {})
            for entry in _numbered(name, value):
                if not isinstance(entry, dict) or not isinstance(entry.get(key_name), str):
                    raise SqsError("MalformedQueryString", f"each {name}.N needs a {key_name}")
                found = entry.get(value_name, "")
                entries[entry[key_name]] = _shape(found) if isinstance(found, dict) else found
        elif name in INTEGERS and isinstance(value, str) and INTEGER.fullmatch(value):
            shaped[name] = int(value)
        else:
            shaped[name] = _shape(value) if isinstance(value, dict) else value
    return shaped


def _numbered(name: str, members: dict[str, Any]) -> list[Any]:
    if not all(INDEX.fullmatch(index) for index in members):
        raise SqsError("MalformedQueryString", f"{name}.N: N must be a number")
    return [members[index] for index in sorted(members, key=int)]


def answer(action: str, result: dict[str, Any], request_id: str) -> Answer:
    inner = (
        ""
        if action in NO_RESULT
        else f"<{action}Result>{_elements(result, action)}</{action}Result>"
    )
    body = (
        f'<?xml version="1.0"?><{action}Response xmlns="{XML_NAMESPACE}">{inner}'
        f"<ResponseMetadata><RequestId>{request_id}</RequestId></ResponseMetadata>"
        f"</{action}Response>"
    )
    return Answer(
        200,
        (("Content-Type", XML_CONTENT_TYPE), ("x-amzn-RequestId", request_id)),
        body.encode(),
    )


def _elements(fields: dict[str, Any], action: str) -> str:
    return "".join(_element(name, value, action) for name, value in fields.items())


def _element(name: str, value: Any, action: str) -> str:
    if name in MAP_ELEMENTS and isinstance(value, dict):
        element, key_name, value_name = MAP_ELEMENTS[name]
        return "".join(
            f"<{element}><{key_name}>{xml_text(k)}</{key_name}>"
            f"{_element(value_name, v, action)}</{element}>"
            for k, v in value.items()
        )
    if isinstance(value, list):
        element = LIST_ELEMENTS.get(name) or f"{action}ResultEntry"  # Successful
        return "".join(_element(element, item, action) for item in value)
    return f"<{name}>{_text(value, action)}</{name}>"


def _text(value: Any, action: str) -> str:
    if isinstance(value, dict):
        return _elements(value, action)
    if isinstance(value, bool):
        return "true" if value else "false"
    return xml_text(str(value))
