"""ASGI entry point: HTTP through Django, websockets through Channels.

Request bodies are bounded (lib/bodies.py), and a websocket's Origin must be this site, as
Django's CSRF check requires of a POST (lib/origins.py). What the process runs besides requests
(the body limits under daphne, the warm-up, the background work) is started in one place:
runtime/process.py.
"""
import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "beyond_site.settings")

from beyond_site.runtime.admission import asgi_application  # noqa: E402

django_asgi_app = asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from beyond_site.chat.routing import websocket_urlpatterns  # noqa: E402
from beyond_site.lib.bodies import BodyLimitMiddleware  # noqa: E402
from beyond_site.lib.origins import SameOriginWebsockets  # noqa: E402
from beyond_site.runtime.process import Lifespan, start_web_process  # noqa: E402
from beyond_site.workspaces.tokens import is_live  # noqa: E402

start_web_process()

application = Lifespan(ProtocolTypeRouter({
    "http": BodyLimitMiddleware(django_asgi_app, token_is_live=is_live),
    "websocket": SameOriginWebsockets(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
}))
