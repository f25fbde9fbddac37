from django.apps import AppConfig


class ApiConfig(AppConfig):
    name = "beyond_site.api"
    label = "api"
    verbose_name = "HTTP API"
