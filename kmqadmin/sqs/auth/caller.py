"""Caller: who signed an SQS request, and where they reached us."""

from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser

from kmqadmin.console.services.roles import Role


@dataclass(frozen=True, slots=True)
class Caller:
    user: AbstractBaseUser
    role: Role
    key_id: str
    base_url: str  # http(s)://host/sqs, as the client reached us

    def queue_url(self, name: str) -> str:
        """Some SDKs send to the queue URL's host: it must point back here."""
        return f"{self.base_url}/{settings.KMQ_SQS_ACCOUNT_ID}/{name}"
