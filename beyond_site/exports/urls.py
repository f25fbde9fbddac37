from django.urls import path

from beyond_site.exports import views
from beyond_site.lib import ids  # noqa: F401  (registers <id:...>: ASCII digits, 1 to 2^63-1)

# Mounted at w/<slug:slug>/runs/ (beyond_site/urls.py): every view receives `slug`.
app_name = "exports"
urlpatterns = [
    path("<id:run_id>/export.md", views.export, {"ext": "md"}, name="md"),
    path("<id:run_id>/export.docx", views.export, {"ext": "docx"}, name="docx"),
]
