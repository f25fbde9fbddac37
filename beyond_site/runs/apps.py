from django.apps import AppConfig


class RunsConfig(AppConfig):
    name = "beyond_site.runs"
    label = "runs"
