from django.apps import AppConfig


class ApiConfig(AppConfig):
    name = "kmqadmin.api"
    label = "api"
    verbose_name = "kmqadmin REST API"
