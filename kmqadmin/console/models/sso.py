"""Who a user is at the identity provider."""

from django.conf import settings
from django.db import models


class SsoIdentity(models.Model):
    """Who a user is at the identity provider (console/oidc/): its issuer and
    subject, the pair OpenID Connect promises never to reuse. A user signing
    in is found by it, never by a username or an email another account may
    hold, so no one at the provider can take over a local account."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="sso_identity"
    )
    issuer = models.CharField(max_length=500)
    subject = models.CharField(max_length=255)
    first_seen = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["issuer", "subject"], name="one_user_per_sso_identity")
        ]

    def __str__(self) -> str:
        return f"{self.subject} at {self.issuer}"
