from django.urls import path

from beyond_site.audit import changes, research, usage, views

# Mounted at w/<slug:slug>/audit/ (beyond_site/urls.py): every view receives `slug`.
app_name = "audit"
urlpatterns = [
    path("", views.run_list, name="runs"),
    path("changes/", changes.change_list, name="changes"),
    path("export.json", views.list_export, name="list_export"),
    path("usage/", usage.usage_page, name="usage"),
    path("usage.csv", usage.usage_csv, name="usage_csv"),
    path("runs/<id:run_id>/", views.run_detail, name="run"),
    path("runs/<id:run_id>/trace.json", views.run_export, name="run_export"),
    path("runs/<id:run_id>/seen", views.seen, name="seen"),
    path("runs/<id:run_id>/calls/<id:call_id>/context/", views.call_context, name="call_context"),
    path("runs/<id:run_id>/sources/<slug:evidence_id>/", research.evidence_text, name="evidence"),
]
