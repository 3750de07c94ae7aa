"""Roles for the API: the same rules as the console (console/services/roles.py)."""

from typing import Any

from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.request import Request

from kmqadmin.console.services.roles import Role, role_of


class HasRole(BasePermission):
    """Reading needs a viewer; anything else the view's ``write_role``
    (operator unless the view says otherwise). Views are typed loosely: DRF
    loads this class while rest_framework.views is still importing."""

    message = "your role does not allow this"

    def has_permission(self, request: Request, view: Any) -> bool:
        needed = Role.VIEWER if request.method in SAFE_METHODS else view_write_role(view)
        return role_of(request.user) >= needed


def view_write_role(view: Any) -> Role:
    return getattr(view, "write_role", Role.OPERATOR)
