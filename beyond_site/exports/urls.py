from django.urls import path

from beyond_site.exports import views

# Mounted at w/<slug:slug>/runs/ (beyond_site/urls.py): every view receives `slug`.
app_name = "exports"
urlpatterns = [
    path("<int:run_id>/export.md", views.export, {"ext": "md"}, name="md"),
    path("<int:run_id>/export.docx", views.export, {"ext": "docx"}, name="docx"),
]
