import pytest
from django.core.cache import cache

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fresh_counts():
    cache.clear()
    yield
    cache.clear()


def test_it_logs_in_with_the_right_password(client, alice):
    response = client.post("/accounts/login/", {"username": "alice", "password": "correct horse battery staple"})
    assert response.status_code == 302


def test_it_refuses_further_tries_after_ten_failures_even_with_the_right_password(client, alice):
    for _ in range(10):
        assert client.post("/accounts/login/", {"username": "alice", "password": "guess"}).status_code == 200
    blocked = client.post("/accounts/login/", {"username": "alice", "password": "correct horse battery staple"})
    assert blocked.status_code == 429
    assert "_auth_user_id" not in client.session


def test_failures_for_one_user_do_not_block_another_from_elsewhere(alice, bob):
    from django.test import Client

    attacker = Client(REMOTE_ADDR="203.0.113.9")
    for _ in range(10):
        attacker.post("/accounts/login/", {"username": "alice", "password": "guess"})
    other = Client(REMOTE_ADDR="198.51.100.7")
    assert other.post("/accounts/login/", {"username": "bob", "password": "correct horse battery staple"}).status_code == 302
