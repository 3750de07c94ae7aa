from django.contrib import admin
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView

from kmqadmin.api import urls as api_urls
from kmqadmin.api.versions import unversioned
from kmqadmin.console.views.login import Login, Logout

urlpatterns = [
    path("", include("kmqadmin.console.urls")),
    path("api/v1/", include(api_urls)),
    path("api/", include((unversioned(api_urls.urlpatterns), "api-unversioned"))),
    path("accounts/login/", Login.as_view(), name="login"),
    path("accounts/logout/", Logout.as_view(), name="logout"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("oidc/", include("kmqadmin.console.oidc.urls")),
    path("admin/", admin.site.urls),
    # Where browsers look when a page names no icon (the API's JSON, say):
    # without it every such visit logged "Not Found: /favicon.ico".
    path("favicon.ico", RedirectView.as_view(url=static("favicon.svg"), permanent=True)),
]

handler404 = "kmqadmin.console.views.not_found.page_not_found"
