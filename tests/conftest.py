import pytest


@pytest.fixture
def alice(django_user_model):
    return django_user_model.objects.create_user("alice", password="correct horse battery staple")


@pytest.fixture
def bob(django_user_model):
    return django_user_model.objects.create_user("bob", password="correct horse battery staple")
