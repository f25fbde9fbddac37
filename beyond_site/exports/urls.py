from django.urls import path

from beyond_site.exports import views
from beyond_site.exports.formats import FORMATS

# Mounted at w/<slug:slug>/runs/ (beyond_site/urls.py): every view receives `slug`.
app_name = "exports"
urlpatterns = [
    *(path(f"<int:run_id>/export.{ext}", views.export, {"ext": ext}, name=ext) for ext in FORMATS if ext != "json"),
    path("<int:run_id>/steps/<int:index>.md", views.step_markdown, name="step_md"),
    path("<int:run_id>/final/", views.mark_final, name="mark_final"),
    path("<int:run_id>/reopen/", views.reopen, name="reopen"),
]
