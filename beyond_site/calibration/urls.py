from django.urls import path

from beyond_site.calibration import label_views, views

# Mounted at w/<slug:slug>/calibration/ (beyond_site/urls.py): every view receives `slug`.
app_name = "calibration"
urlpatterns = [
    path("", views.reports_page, name="reports"),
    path("start/", views.start, name="start"),
    path("<id:report_id>/resume/", views.resume, name="resume"),
    path("<id:report_id>.json", views.report_json, name="report_json"),
    path("<id:report_id>.csv", views.report_csv, name="report_csv"),
    path("runs/<id:run_id>/labels/", label_views.label, name="label"),
]
