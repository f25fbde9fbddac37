from django.urls import path

from beyond_site.accounts import views

# Mounted at invitations/ (beyond_site/urls.py).
app_name = "accounts"
urlpatterns = [
    path("<str:token>/", views.invitation, name="invitation"),
    path("<str:token>/accept/", views.accept, name="accept"),
    path("<str:token>/signup/", views.signup, name="signup"),
]
