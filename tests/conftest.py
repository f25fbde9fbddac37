import tempfile

import pytest


def pytest_configure(config):
    # Every test user gets a password; hashing each one with the production work factor (a million
    # PBKDF2 rounds, about half a second here) was most of the suite's time. What the hash is does
    # not matter to these tests; the site and the servers the browser tests start keep the default.
    from django.conf import settings
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    # Uploaded files' originals go to a folder of this test session, not the project's media/.
    settings.STORAGES["originals"]["OPTIONS"]["location"] = tempfile.mkdtemp(prefix="beyond-originals-")


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


@pytest.fixture(scope="session")
def django_db_modify_db_settings(tmp_path_factory):
    """On SQLite, a test database in a file, as the app's own is: the app's async code reads and
    writes from several threads (database_sync_to_async), and an in-memory database shared
    between connections locks whole tables instead of waiting as a file database does."""
    from django.conf import settings

    database = settings.DATABASES["default"]
    if database["ENGINE"] == "django.db.backends.sqlite3":
        database.setdefault("TEST", {})["NAME"] = str(tmp_path_factory.mktemp("db") / "test.sqlite3")
