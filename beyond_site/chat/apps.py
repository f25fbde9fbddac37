from django.apps import AppConfig


class ChatConfig(AppConfig):
    name = "beyond_site.chat"
    label = "chat"
