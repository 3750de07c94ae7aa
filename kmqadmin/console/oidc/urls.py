from django.urls import path

from kmqadmin.console.oidc.views import Callback, SignIn

# The names mozilla-django-oidc reverses.
urlpatterns = [
    path("authenticate/", SignIn.as_view(), name="oidc_authentication_init"),
    path("callback/", Callback.as_view(), name="oidc_authentication_callback"),
]
