from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("w/<slug:slug>/audit/", include("beyond_site.audit.urls")),
    path("w/<slug:slug>/settings/", include("beyond_site.workspace_settings.urls")),
    path("w/<slug:slug>/runs/", include("beyond_site.exports.urls")),
    path("w/<slug:slug>/calibration/", include("beyond_site.calibration.urls")),
    path("", include("beyond_site.chat.urls")),
]
