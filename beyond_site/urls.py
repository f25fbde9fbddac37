from django.contrib import admin
from django.urls import include, path

from beyond_site.lib.accounts import account_urls

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include(account_urls())),  # password resets only where mail is configured
    path("w/<slug:slug>/audit/", include("beyond_site.audit.urls")),
    path("w/<slug:slug>/settings/", include("beyond_site.workspace_settings.urls")),
    path("w/<slug:slug>/runs/", include("beyond_site.exports.urls")),
    path("", include("beyond_site.chat.urls")),
]
