import pytest


@pytest.fixture
def alice(django_user_model):
    return django_user_model.objects.create_user("alice", password="correct horse battery staple")


@pytest.fixture
def bob(django_user_model):
    return django_user_model.objects.create_user("bob", password="correct horse battery staple")


@pytest.fixture
def carol(django_user_model):
    return django_user_model.objects.create_user("carol", password="correct horse battery staple")


@pytest.fixture
def dave(django_user_model):
    return django_user_model.objects.create_user("dave", password="correct horse battery staple")
