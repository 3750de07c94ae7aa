"""Secrets the console must read back to use (SQS keys' secrets, to verify
a signature; alert webhooks' secrets, to sign): stored encrypted with
KMQ_SQS_ENCRYPTION_KEY (Fernet; several keys rotate, the first encrypting),
decrypted only at the moment of use."""

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings


def encrypt(secret: str) -> bytes:
    return _fernet().encrypt(secret.encode())


def decrypt(stored: bytes) -> str | None:
    """None when no key configured can read it (rotated out, or corrupt)."""
    try:
        return _fernet().decrypt(bytes(stored)).decode()
    except (InvalidToken, ValueError):  # ValueError: a configured key is not a Fernet key
        return None


def _fernet() -> MultiFernet:
    keys = [k.strip() for k in settings.KMQ_SQS_ENCRYPTION_KEY.split(",") if k.strip()]
    return MultiFernet([Fernet(k) for k in keys])
