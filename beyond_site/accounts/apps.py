from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "beyond_site.accounts"
    label = "accounts"
