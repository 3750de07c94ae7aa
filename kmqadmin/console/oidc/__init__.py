"""Single sign-on with OpenID Connect: the console's login through the
company's identity provider (mozilla-django-oidc's code flow), the API's
bearer tokens checked on the provider's keys (PyJWT), and roles that follow
the provider's groups at every sign-in. Configured by KMQ_OIDC_* (settings.py)."""
