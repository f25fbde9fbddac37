"""The API's routes, registered on its one NinjaAPI as their modules load (docs/api.md)."""
from beyond_site.api import audit, events, runs, workspace  # noqa: F401  (each module adds its operations)
from beyond_site.api.base import api

app_name = api.urls_namespace
urlpatterns = api.urls[0]
