from django.contrib import admin
from django.urls import include, path

from beyond_site.accounts.memberships import leave
from beyond_site.accounts.tokens import revoke as revoke_api_token, tokens_page
from beyond_site.lib import ids  # noqa: F401  (registers <id:...> for every app's URLs, included below)
from beyond_site.lib.accounts import account_urls
from beyond_site.workspace_settings.creation import new_workspace

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/v1/", include("beyond_site.api.urls")),
    path("accounts/", include(account_urls())),  # password resets only where mail is configured
    path("invitations/", include("beyond_site.accounts.urls")),
    path("account/tokens/", tokens_page, name="api_tokens"),
    path("account/tokens/<id:token_id>/revoke/", revoke_api_token, name="api_token_revoke"),
    path("workspaces/new/", new_workspace, name="workspace_new"),
    path("w/<slug:slug>/leave/", leave, name="leave_workspace"),
    path("w/<slug:slug>/files/", include("beyond_site.files.urls")),
    path("w/<slug:slug>/audit/", include("beyond_site.audit.urls")),
    path("w/<slug:slug>/settings/", include("beyond_site.workspace_settings.urls")),
    path("w/<slug:slug>/runs/", include("beyond_site.exports.urls")),
    path("w/<slug:slug>/calibration/", include("beyond_site.calibration.urls")),
    path("", include("beyond_site.chat.urls")),
]
