from channels.generic.websocket import AsyncWebsocketConsumer
from django.urls import path, re_path

from beyond_site.chat.consumers import RunConsumer
from beyond_site.lib import ids  # noqa: F401  (registers <id:...>: ASCII digits, 1 to 2^63-1)


class NoSuchStream(AsyncWebsocketConsumer):
    """Any other address (`/ws/runs/-1/`, a run id past 2^63-1): accepted, then closed with 4404,
    instead of the router's "No route found" traceback. Accepted first, since a refused handshake
    looks like 1006 to the browser, which htmx retries forever (as chat/consumers.py says)."""

    async def connect(self):
        await self.accept()
        await self.close(code=4404)


websocket_urlpatterns = [
    path("ws/runs/<id:run_id>/", RunConsumer.as_asgi()),
    re_path(r"", NoSuchStream.as_asgi()),
]
