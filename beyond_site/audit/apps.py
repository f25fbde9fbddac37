from django.apps import AppConfig


class AuditConfig(AppConfig):
    name = "beyond_site.audit"
    label = "audit"
