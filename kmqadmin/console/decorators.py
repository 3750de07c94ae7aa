"""Role checks for console views: login first, then the role the view needs."""

from collections.abc import Callable
from functools import wraps

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse

from kmqadmin.console.services.roles import Role, role_of

View = Callable[..., HttpResponse]


def role_required(role: Role) -> Callable[[View], View]:
    """An anonymous visitor goes to the login page; a signed-in one without
    the role gets 403 naming it, so they know whom to ask."""

    def decorate(view: View) -> View:
        @login_required
        @wraps(view)
        def checked(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            if role_of(request.user) < role:
                raise PermissionDenied(f"this needs the {role.name.lower()} role")
            return view(request, *args, **kwargs)

        return checked

    return decorate


viewer = role_required(Role.VIEWER)
operator = role_required(Role.OPERATOR)
admin = role_required(Role.ADMIN)
