from django.urls import path

from beyond_site.exports import views
from beyond_site.exports.formats import FORMATS

# Mounted at w/<slug:slug>/runs/ (beyond_site/urls.py): every view receives `slug`.
app_name = "exports"
urlpatterns = [
    *(path(f"<id:run_id>/export.{ext}", views.export, {"ext": ext}, name=ext) for ext in FORMATS if ext != "json"),
    *(path(f"<id:run_id>/client.{ext}", views.confirm_client, {"ext": ext}, name=f"confirm_{ext}")
      for ext in FORMATS if ext != "json"),
    path("<id:run_id>/steps/<id:index>.md", views.step_markdown, name="step_md"),
    path("<id:run_id>/rename/", views.rename, name="rename"),
    path("<id:run_id>/final/", views.mark, {"final": True}, name="mark_final"),
    path("<id:run_id>/reopen/", views.mark, {"final": False}, name="reopen"),
]
