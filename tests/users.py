"""Users with a role: the groups the role migration creates."""

from django.contrib.auth.models import Group, User


def user_with(role: str, name: str | None = None) -> User:
    user = User.objects.create_user(name or role)
    user.groups.add(Group.objects.get(name=role))
    return user
