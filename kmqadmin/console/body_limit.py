"""Request bodies capped before anything parses them.

Django's DATA_UPLOAD_MAX_MEMORY_SIZE guards only its own form parsing; DRF's
parsers read request.body whole, however large. This refuses a declared
Content-Length over KMQ_MAX_REQUEST_BYTES with 413, and reads a body of
undeclared length (chunked) only up to the cap.
"""

import io
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse


class BodyLimitMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        cap = settings.KMQ_MAX_REQUEST_BYTES
        declared = request.META.get("CONTENT_LENGTH")
        if declared:
            if not declared.isascii() or not declared.isdigit():
                return _refused(400, "Content-Length is not a number")
            if int(declared) > cap:
                return _refused(413, f"request body of {declared} bytes; at most {cap}")
        elif request.META.get("HTTP_TRANSFER_ENCODING", "").lower() == "chunked":
            body = request._stream.read(cap + 1)
            if len(body) > cap:
                return _refused(413, f"request body over {cap} bytes")
            request._stream = io.BytesIO(body)
        return self.get_response(request)


def _refused(status: int, detail: str) -> JsonResponse:
    return JsonResponse({"detail": detail}, status=status)
