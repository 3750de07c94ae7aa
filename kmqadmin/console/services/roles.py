"""Roles: viewer < operator < admin, held as Django groups of those names.

A viewer sees everything; an operator also acts on messages and schedules
(ack, retry, extend, reject, redrive, schedule edits); an admin also
registers clusters, queues and schedules topics. A superuser is an admin.
"""

from enum import IntEnum

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser


class Role(IntEnum):
    NONE = 0
    VIEWER = 1
    OPERATOR = 2
    ADMIN = 3


GROUPS = {"viewer": Role.VIEWER, "operator": Role.OPERATOR, "admin": Role.ADMIN}


def role_of(user: AbstractBaseUser | AnonymousUser) -> Role:
    if not user.is_authenticated or not user.is_active:
        return Role.NONE
    if user.is_superuser:
        return Role.ADMIN
    names = user.groups.values_list("name", flat=True)
    return max((GROUPS[n] for n in names if n in GROUPS), default=Role.NONE)
