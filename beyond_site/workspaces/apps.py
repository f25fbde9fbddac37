from django.apps import AppConfig


class WorkspacesConfig(AppConfig):
    name = "beyond_site.workspaces"
    label = "workspaces"
