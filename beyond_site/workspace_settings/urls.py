from django.urls import path

from beyond_site.workspace_settings import budgets, calibration_requirement, deliverables, invitations, research, views

# Mounted at w/<slug:slug>/settings/ (beyond_site/urls.py): every view receives `slug`.
app_name = "workspace_settings"
urlpatterns = [
    path("", views.settings_page, name="settings"),
    path("frameworks/", views.frameworks, name="frameworks"),
    path("topology/", views.topology, name="topology"),
    path("research/", research.research_default, name="research"),
    path("budgets/", budgets.budgets, name="budgets"),
    path("calibration-requirement/", calibration_requirement.calibration_requirement, name="calibration_requirement"),
    path("deliverables/", deliverables.deliverables, name="deliverables"),
    path("members/", views.member_add, name="member_add"),
    path("members/<id:membership_id>/role/", views.member_role, name="member_role"),
    path("members/<id:membership_id>/remove/", views.member_remove, name="member_remove"),
    path("invitations/", invitations.create, name="invite"),
    path("invitations/<id:invitation_id>/withdraw/", invitations.revoke, name="invitation_revoke"),
    path("news/seen/", views.admin_news_seen, name="admin_news_seen"),
]
