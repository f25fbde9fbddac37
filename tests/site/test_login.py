"""Login throttling (django-axes): ten failures for one username from one address lock that pair
out for 15 minutes, on the app's login and the admin's alike; other people are not locked out."""
import pytest
from django.test import Client, override_settings

pytestmark = pytest.mark.django_db

RIGHT = "correct horse battery staple"


def fail_ten_times(client, url, username="alice"):
    for _ in range(10):
        client.post(url, {"username": username, "password": "guess"})


def test_it_logs_in_with_the_right_password(client, alice):
    response = client.post("/accounts/login/", {"username": "alice", "password": RIGHT})
    assert response.status_code == 302


def test_it_refuses_further_tries_after_ten_failures_even_with_the_right_password(client, alice):
    for _ in range(9):
        assert client.post("/accounts/login/", {"username": "alice", "password": "guess"}).status_code == 200
    assert client.post("/accounts/login/", {"username": "alice", "password": "guess"}).status_code == 429
    blocked = client.post("/accounts/login/", {"username": "alice", "password": RIGHT})
    assert blocked.status_code == 429
    assert b"Too many failed logins" in blocked.content
    assert "_auth_user_id" not in client.session


def test_the_admin_login_is_throttled_too(django_user_model):
    django_user_model.objects.create_superuser("root", "root@example.com", RIGHT)
    client = Client(REMOTE_ADDR="203.0.113.9")
    fail_ten_times(client, "/admin/login/", "root")
    blocked = client.post("/admin/login/", {"username": "root", "password": RIGHT})
    assert blocked.status_code == 429
    assert "_auth_user_id" not in client.session


def test_one_persons_mistakes_do_not_lock_out_others_at_the_same_address(alice, bob):
    office = "198.51.100.7"
    fail_ten_times(Client(REMOTE_ADDR=office), "/accounts/login/", "alice")
    colleague = Client(REMOTE_ADDR=office)
    assert colleague.post("/accounts/login/", {"username": "bob", "password": RIGHT}).status_code == 302


def test_the_lockout_is_per_address_too(alice):
    fail_ten_times(Client(REMOTE_ADDR="203.0.113.9"), "/accounts/login/", "alice")
    home = Client(REMOTE_ADDR="198.51.100.7")
    assert home.post("/accounts/login/", {"username": "alice", "password": RIGHT}).status_code == 302


def test_a_forwarded_address_is_ignored_unless_a_proxy_is_trusted(alice):
    # Without a trusted proxy, X-Forwarded-For is the client's own claim: changing it changes nothing.
    for n in range(10):
        Client(REMOTE_ADDR="203.0.113.9", HTTP_X_FORWARDED_FOR=f"192.0.2.{n}").post(
            "/accounts/login/", {"username": "alice", "password": "guess"})
    again = Client(REMOTE_ADDR="203.0.113.9", HTTP_X_FORWARDED_FOR="192.0.2.99")
    assert again.post("/accounts/login/", {"username": "alice", "password": RIGHT}).status_code == 429


@override_settings(BEYOND_TRUSTED_PROXY_COUNT=1)
def test_behind_a_trusted_proxy_the_forwarded_address_counts_and_a_forged_prefix_does_not(alice):
    proxy = "10.0.0.2"
    for n in range(10):  # the attacker writes a new address each time; the proxy appends the real one
        Client(REMOTE_ADDR=proxy, HTTP_X_FORWARDED_FOR=f"192.0.2.{n}, 203.0.113.9").post(
            "/accounts/login/", {"username": "alice", "password": "guess"})
    attacker = Client(REMOTE_ADDR=proxy, HTTP_X_FORWARDED_FOR="192.0.2.99, 203.0.113.9")
    assert attacker.post("/accounts/login/", {"username": "alice", "password": RIGHT}).status_code == 429
    alice_at_home = Client(REMOTE_ADDR=proxy, HTTP_X_FORWARDED_FOR="198.51.100.7")
    assert alice_at_home.post("/accounts/login/", {"username": "alice", "password": RIGHT}).status_code == 302
