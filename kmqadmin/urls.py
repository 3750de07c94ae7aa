from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("", include("kmqadmin.console.urls")),
    path("api/", include("kmqadmin.api.urls")),
    path("accounts/", include("django.contrib.auth.urls")),
    path("admin/", admin.site.urls),
]
