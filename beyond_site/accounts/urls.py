from django.urls import path

from beyond_site.accounts import memberships, views

# Mounted at invitations/ (beyond_site/urls.py).
app_name = "accounts"
urlpatterns = [
    path("<str:token>/", views.invitation, name="invitation"),
    path("<str:token>/accept/", views.accept, name="accept"),
    path("<str:token>/signup/", views.signup, name="signup"),
    # An offer of a role to one account (workspaces/consent.py): no link, answered when signed in.
    path("offers/<id:offer_id>/accept/", memberships.accept_offer, name="offer_accept"),
    path("offers/<id:offer_id>/decline/", memberships.decline_offer, name="offer_decline"),
]
