from django.apps import AppConfig


class ExportsConfig(AppConfig):
    name = "beyond_site.exports"
    label = "exports"
