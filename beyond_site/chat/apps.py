from importlib import import_module

from django.apps import AppConfig


class ChatConfig(AppConfig):
    name = "beyond_site.chat"
    label = "chat"

    def ready(self):
        # A logout closes its session's open run pages (chat/sessions.py): its receiver is
        # connected in every process that serves logins, whether or not it serves websockets.
        import_module(f"{self.name}.sessions")
