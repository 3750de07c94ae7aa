"""JSON bodies, parsed without a 500 whatever their shape."""

from typing import Any

from rest_framework import parsers
from rest_framework.exceptions import ParseError


class JSONParser(parsers.JSONParser):
    """DRF's, but a body nested deeper than Python's recursion limit is a 400:
    json.loads raises RecursionError there, which DRF lets through."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - nested too deeply") from None
