"""A schedule's address in URLs and forms: its key, reversibly, as text.

A key is whatever bytes a producer wrote (etf1's wire format allows any), so
its UTF-8 reading is not an address: an undecodable key shows with U+FFFD and
names no schedule. A key that is UTF-8 is addressed by its text (the common
case: URLs read as the id); any other key, the empty one, or a text that
begins with the marker, by the marker and the key in base64url, so every key has exactly one
address and every address one key.
"""

import base64
import binascii

ENCODED = "~b64:"


def ref_of(key: bytes) -> str:
    try:
        text = key.decode()
    except UnicodeDecodeError:
        text = None
    if text and not text.startswith(ENCODED):
        return text
    return ENCODED + base64.urlsafe_b64encode(key).decode()


def key_of(ref: str) -> bytes:
    """The key ``ref`` addresses; ValueError if it addresses none."""
    if not ref.startswith(ENCODED):
        return ref.encode()  # a lone surrogate: UnicodeEncodeError, a ValueError
    encoded = ref.removeprefix(ENCODED)
    try:
        key = base64.urlsafe_b64decode(encoded.encode("ascii"))
    except (binascii.Error, UnicodeEncodeError) as exc:
        raise ValueError(f"{ref!r}: not base64url ({exc})") from None
    if ref_of(key) != ref:  # one spelling per key: padding kept, no other alphabet
        raise ValueError(f"{ref!r} is not how key {key!r} is written")
    return key
