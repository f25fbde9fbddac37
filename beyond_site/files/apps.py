from django.apps import AppConfig


class FilesConfig(AppConfig):
    name = "beyond_site.files"
    label = "files"
