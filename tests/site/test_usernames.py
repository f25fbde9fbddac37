"""No look-alike usernames (lib/usernames.py): a name mixing scripts, a non-ASCII name that reads as
ASCII, or one that reads as an existing name is refused at sign-up, in the Django admin and by the
command that creates accounts; names in one script that pass for nothing else are welcome. And the
bidirectional controls that make text read otherwise than it is are kept out of tasks and memories."""
from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError

from beyond_site.lib.usernames import skeleton, username_refusal
from beyond_site.runs.models import Run
from beyond_site.workspaces import knowledge
from beyond_site.workspaces.models import Memory, Message
from tests.site.chat_support import client_for, workspace_with

pytestmark = pytest.mark.django_db

PASSWORD = "a long enough passphrase 42"
CYRILLIC_A = "\u0430"


@pytest.fixture
def link(alice):
    workspace_with("acme", admin=alice)
    response = client_for(alice).post("/w/acme/settings/invitations/", {"role": "member", "days": "7", "note": ""})
    return "/" + re.search(r'id="invitation-link"[^>]*value="([^"]+)"', response.content.decode()).group(1).split("/", 3)[3]


def sign_up(link: str, username: str):
    return client_for().post(link + "signup/", {"username": username, "password1": PASSWORD, "password2": PASSWORD})


@pytest.mark.parametrize("username, why", [
    (CYRILLIC_A + "lice", "one script"),                 # the Cyrillic а of the issue
    ("b" + "\u03bf" + "b", "one script"),                 # Greek omicron in "bob"
    ("\u0430\u0441\u0435", "reads as “ace”"),             # all Cyrillic, all look-alikes
    ("\u0440\u0430\u0443", "reads as “pay”"),
    ("Alice", "already exists"),                          # another case (Django refuses it already)
    ("ａｌｉｃｅ", "already exists"),                        # full width: NFKC makes it alice (Django too)
    ("al1ce", None), ("aIice", "looks like one that is taken"),  # a capital I reads as the l of alice
    ("ali\u200bce", "letters, numbers"),                  # a zero-width space
    ("\u202eecila", "letters, numbers"),                  # a right-to-left override
])
def test_a_look_alike_username_is_refused_at_sign_up(link, alice, username, why):
    response = sign_up(link, username)
    users = set(get_user_model().objects.values_list("username", flat=True))
    if why is None:
        assert response.status_code == 302 and username in users
        return
    assert response.status_code == 400, username
    assert why in response.content.decode().replace("&#x27;", "'").replace("&quot;", '"'), response.content.decode()
    assert users == {"alice"}


@pytest.mark.parametrize("username", ["иван", "山田太郎", "josé", "ελένη", "user.name+1@x", "bob_2"])
def test_a_name_in_one_script_that_passes_for_nothing_else_is_welcome(link, username):
    assert sign_up(link, username).status_code == 302
    assert get_user_model().objects.filter(username=username).exists()


def test_the_skeleton_reads_look_alikes_as_ascii():
    assert skeleton(CYRILLIC_A + "lice") == skeleton("alice") == "alice"
    assert skeleton("B0B1") == skeleton("bobl") == "bobl"
    assert skeleton("иван") != skeleton("bah")


def test_the_django_admin_refuses_a_look_alike_too(alice, django_user_model, client):
    root = django_user_model.objects.create_superuser("root", password="x" * 12)
    client.force_login(root)
    response = client.post("/admin/auth/user/add/", {"username": CYRILLIC_A + "lice", "usable_password": "true",
                                                      "password1": PASSWORD, "password2": PASSWORD})
    assert response.status_code == 200 and "one script" in response.content.decode()
    assert not django_user_model.objects.filter(username=CYRILLIC_A + "lice").exists()


def test_the_command_refuses_a_look_alike_too(alice):
    workspace_with("acme", admin=alice)
    with pytest.raises(CommandError, match="one script"):
        call_command("beyond_workspace", "add-member", "acme", CYRILLIC_A + "lice", "member")
    assert not get_user_model().objects.filter(username=CYRILLIC_A + "lice").exists()


def test_an_existing_account_is_not_measured_against_itself(alice):
    assert username_refusal("alice", exclude_pk=alice.pk) is None


# -- bidirectional controls in tasks and memories ------------------------------------------------------

RLO, PDF, LRI, PDI = "\u202e", "\u202c", "\u2066", "\u2069"


def test_a_task_loses_its_bidi_controls(alice, settings):
    settings.BEYOND_RUN_IN_PROCESS = False
    workspace_with("acme", member=alice)
    task = f"Draft a note on {RLO}fdp.exe{PDF} and {LRI}x{PDI}"
    assert client_for(alice).post("/w/acme/send/", {"message": task}).status_code == 302
    run = Run.objects.get()
    assert run.task == "Draft a note on fdp.exe and x" == Message.objects.get().text


def test_a_memory_loses_its_bidi_controls(alice):
    workspace = workspace_with("acme", member=alice)
    memory = knowledge.add_memory(workspace, f"We are {RLO}emcA{PDF} Ltd", user=alice)
    assert memory.text == "We are emcA Ltd"
    knowledge.edit_memory(memory, f"We are {LRI}Acme{PDI} Ltd", user=alice)
    assert Memory.objects.get(pk=memory.pk).text == "We are Acme Ltd"
