from django.apps import AppConfig


class WorkspaceSettingsConfig(AppConfig):
    name = "beyond_site.workspace_settings"
    label = "workspace_settings"
