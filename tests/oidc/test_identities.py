"""Who a provider's claims are here, and the role their groups give: found
by issuer and subject, made once, roles following the groups each time."""

import pytest
from django.contrib.auth.models import User

from kmqadmin.console.models import AuditEntry, SsoIdentity
from kmqadmin.console.oidc.identities import Refused, role_of_claims, signed_in
from kmqadmin.console.oidc.provider import Provider
from kmqadmin.console.services.roles import Role, role_of
from tests.users import user_with

pytestmark = pytest.mark.django_db
ACME = Provider(
    issuer="https://sso.example.com/realms/acme",
    client_id="kmqadmin",
    client_secret="s",
    name="Acme SSO",
    groups_claim="groups",
    role_groups={"kmq-viewers": "viewer", "kmq-operators": "operator", "kmq-admins": "admin"},
    audience="kmqadmin",
)


def claims(sub: str = "f3b1", username: str = "alice", *groups: str) -> dict:
    return {"sub": sub, "preferred_username": username, "groups": list(groups)}


@pytest.mark.parametrize(
    ("groups", "role"),
    [
        (["kmq-viewers", "kmq-admins", "sales"], "admin"),
        (["sales"], None),
        ("kmq-operators", "operator"),  # a provider that sends one group as a string
        (None, None),
        ([1, {"x": 2}, "kmq-viewers"], "viewer"),
    ],
)
def test_the_highest_mapped_group_is_the_role(groups: object, role: str | None) -> None:
    assert role_of_claims(ACME, {"sub": "x", "groups": groups}) == role


def test_the_first_sign_in_makes_a_linked_user_with_its_role() -> None:
    user = signed_in(ACME, {**claims("f3b1", "alice", "kmq-operators"), "email": "a@x.test"})
    assert (user.username, user.email, role_of(user)) == ("alice", "a@x.test", Role.OPERATOR)
    assert not user.has_usable_password()
    assert SsoIdentity.objects.get(user=user).subject == "f3b1"
    assert signed_in(ACME, claims("f3b1", "alice", "kmq-operators")) == user


def test_roles_follow_the_groups_at_each_sign_in_and_each_change_is_audited() -> None:
    user = signed_in(ACME, claims("c4", "carol", "kmq-admins"))
    assert role_of(user) == Role.ADMIN
    user = signed_in(ACME, claims("c4", "carol", "kmq-viewers"))
    assert role_of(user) == Role.VIEWER
    changes = AuditEntry.objects.filter(action="role change", target="carol").order_by("id")
    assert [entry.after for entry in changes] == [
        {"added": ["admin"]},
        {"removed": ["admin"]},
        {"added": ["viewer"]},
    ]


def test_removed_from_every_mapped_group_loses_its_role_and_is_refused() -> None:
    user = signed_in(ACME, claims("c4", "carol", "kmq-admins"))
    user.groups.create(name="local-team")  # groups that are not roles stay
    with pytest.raises(Refused, match="none of the groups"):
        signed_in(ACME, claims("c4", "carol", "sales"))
    user.refresh_from_db()
    assert role_of(user) == Role.NONE
    assert list(user.groups.values_list("name", flat=True)) == ["local-team"]


def test_no_mapped_group_at_the_first_sign_in_makes_no_user() -> None:
    with pytest.raises(Refused, match="you are in none of the groups"):
        signed_in(ACME, claims("b0", "bob", "sales"))
    assert not User.objects.filter(username="bob").exists()


def test_a_local_account_of_the_same_name_is_not_taken_over() -> None:
    local = user_with("admin", "alice")
    with pytest.raises(Refused, match="already exists here"):
        signed_in(ACME, claims("f3b1", "alice", "kmq-admins"))
    assert not SsoIdentity.objects.exists()
    assert role_of(local) == Role.ADMIN


def test_the_same_subject_at_another_issuer_is_someone_else() -> None:
    signed_in(ACME, claims("same-sub", "alice", "kmq-viewers"))
    other = Provider(**{**ACME.__dict__, "issuer": "https://other.example.com"})
    with pytest.raises(Refused, match="already exists here"):
        signed_in(other, claims("same-sub", "alice", "kmq-admins"))


def test_a_deactivated_user_is_refused_and_no_sub_is_refused() -> None:
    user = signed_in(ACME, claims("d1", "dave", "kmq-viewers"))
    User.objects.filter(pk=user.pk).update(is_active=False)
    with pytest.raises(Refused, match="deactivated"):
        signed_in(ACME, claims("d1", "dave", "kmq-viewers"))
    with pytest.raises(Refused, match="no sub claim"):
        signed_in(ACME, {"preferred_username": "eve", "groups": ["kmq-admins"]})
