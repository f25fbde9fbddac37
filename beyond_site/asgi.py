"""ASGI entry point: HTTP through Django, websockets through Channels.

Request bodies are bounded (lib/bodies.py; under daphne also lib/daphne_bodies.py), and a
websocket's Origin must be this site, as Django's CSRF check requires of a POST (lib/origins.py).
Django works on at most BEYOND_HTTP_CONCURRENCY requests at once; the others wait their turn
(lib/admission.py). Under daphne the process warms up before it listens (runs/warmup.py).
"""
import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "beyond_site.settings")

from beyond_site.lib.admission import asgi_application  # noqa: E402

django_asgi_app = asgi_application()

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from beyond_site.chat.routing import websocket_urlpatterns  # noqa: E402
from beyond_site.lib import daphne_bodies  # noqa: E402
from beyond_site.lib.bodies import BodyLimitMiddleware  # noqa: E402
from beyond_site.lib.origins import SameOriginWebsockets  # noqa: E402
from beyond_site.runs import warmup  # noqa: E402
from beyond_site.lib.ws_auth import AuthMiddlewareStack  # noqa: E402  (needs the apps loaded)

daphne_bodies.install()  # when daphne serves this process: bodies refused early, read from disk
if warmup.daphne_serves():
    warmup.prepare_process()  # what the process keeps is built before it listens

application = ProtocolTypeRouter({
    "http": BodyLimitMiddleware(django_asgi_app),
    "websocket": SameOriginWebsockets(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
})
