"""JSON that any producer or request wrote: parsed and pretty-printed with
every failure a ValueError.

json.loads raises RecursionError for input nested past Python's stack (about
10,000 levels of "[" do it), and json.dumps may for a document it parsed; a
caller that guards only ValueError then answers 500 or crash-loops. Every
reader of untrusted JSON goes through here instead.
"""

import json
from typing import Any


def loads(data: bytes | str) -> Any:
    """ValueError when ``data`` is not UTF-8 JSON or is nested too deeply."""
    try:
        return json.loads(data)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None


def pretty(document: Any) -> str:
    """Indented, non-ASCII kept; ValueError when too deep to print."""
    try:
        return json.dumps(document, indent=2, ensure_ascii=False, default=str)
    except RecursionError:
        raise ValueError("JSON nested too deeply to print") from None
