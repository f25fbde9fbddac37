from django.urls import path

from beyond_site.files import views

# Mounted at w/<slug:slug>/files/ (beyond_site/urls.py): every view receives `slug`.
app_name = "files"
urlpatterns = [
    path("", views.library, name="library"),
    path("add/", views.add, name="add"),
    path("<id:document_id>/", views.preview, name="preview"),
    path("<id:document_id>/row/", views.row, name="row"),
    path("<id:document_id>/download/", views.download, name="download"),
    path("<id:document_id>/remove/", views.remove, name="remove"),
]
