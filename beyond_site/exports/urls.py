from django.urls import path

from beyond_site.exports import views
from beyond_site.exports.formats import FORMATS
from beyond_site.lib import ids  # noqa: F401  (registers <id:...>: ASCII digits, 1 to 2^63-1)

# Mounted at w/<slug:slug>/runs/ (beyond_site/urls.py): every view receives `slug`.
app_name = "exports"
urlpatterns = [
    *(path(f"<id:run_id>/export.{ext}", views.export, {"ext": ext}, name=ext) for ext in FORMATS if ext != "json"),
    path("<id:run_id>/steps/<id:index>.md", views.step_markdown, name="step_md"),
    path("<id:run_id>/final/", views.mark, {"final": True}, name="mark_final"),
    path("<id:run_id>/reopen/", views.mark, {"final": False}, name="reopen"),
]
