"""Bad input gets a 400 with a message, never a 500: ids that are not ids, NUL characters (which
PostgreSQL cannot store), file names too long to parse; and a fuzz test over the chat, upload and
memory endpoints. tests/site/test_bad_input_postgres.py runs this file again on PostgreSQL."""
from __future__ import annotations

import pytest
from django.core.exceptions import SuspiciousFileOperation
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from hypothesis import HealthCheck, given, settings as hypothesis_settings, strategies as st

from beyond_site.runs.models import Run
from beyond_site.workspaces.models import Conversation, Document, Memory, Message, Workspace
from tests.site.chat_support import workspace_with

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("queued_runs_stay_queued")]
HTMX = {"HTTP_HX_REQUEST": "true"}
NUL = "\x00"


@pytest.fixture
def member(alice):
    workspace_with("acme", member=alice)
    client = Client(raise_request_exception=False)
    client.force_login(alice)
    return client


def nothing_stored():
    return not (Run.objects.exists() or Message.objects.exists() or Memory.objects.exists()
                or Document.objects.exists() or Conversation.objects.exists())


@pytest.mark.parametrize("value", ["abc", "1.5", "-3", "²", "1e3", "9" * 40, " ", "0"])
@pytest.mark.parametrize("url", ["/w/acme/send/", "/w/acme/upload/"])
def test_a_conversation_that_is_not_an_id_is_a_400_with_a_message(member, url, value):
    data = {"message": "Draft a policy", "idempotency_key": "k", "conversation": value}
    if url.endswith("upload/"):
        data["files"] = SimpleUploadedFile("a.txt", b"Scope.")
    response = member.post(url, data, **HTMX)
    if value.strip() in ("",):
        return  # an empty conversation means "a new one": not bad input
    assert response.status_code == 400, response.content
    assert "That is not a valid conversation." in response.content.decode()
    assert nothing_stored()


@pytest.mark.parametrize("data", [{"message": f"Draft{NUL} a policy"}, {"message": "Draft", "idempotency_key": f"k{NUL}"},
                                  {"message": "Draft", "conversation": f"1{NUL}"}])
def test_nul_characters_in_a_task_or_a_key_are_refused_before_the_database(member, data):
    response = member.post("/w/acme/send/", data, **HTMX)
    assert response.status_code == 400 and "NUL characters" in response.content.decode()
    assert nothing_stored()


def test_nul_characters_in_a_memory_are_refused_with_a_message(member):
    response = member.post("/w/acme/memories/", {"text": f"We are{NUL} Acme."}, **HTMX)
    assert response.status_code == 400 and "NUL characters" in response.content.decode()
    memory = Memory.objects.create(workspace=Workspace.objects.get(slug="acme"), text="Ok.")
    response = member.post(f"/w/acme/memories/{memory.pk}/", {"text": f"Changed{NUL}"}, **HTMX)
    assert response.status_code == 400
    memory.refresh_from_db()
    assert memory.text == "Ok."


def test_nul_characters_in_a_query_string_or_an_urlencoded_form_are_refused(member):
    form = "application/x-www-form-urlencoded"
    for response in (member.get("/w/acme/?before=1%00"), member.get("/w/acme/?chats=%00"),
                     member.get("/w/acme/audit/?q=a%00b"),
                     member.post("/w/acme/memories/", "text=a%00b", content_type=form),
                     Client(raise_request_exception=False).post("/accounts/login/", "username=a%00&password=x",
                                                                content_type=form)):
        assert response.status_code == 400 and b"NUL characters" in response.content
    # A multipart form is left to its view; Django's form fields refuse the character too.
    page = Client().post("/accounts/login/", {"username": f"a{NUL}", "password": "x"})
    assert page.status_code == 200 and "_auth_user_id" not in page.wsgi_request.session


def test_a_nul_character_in_a_file_name_never_reaches_the_database(member):
    response = member.post("/w/acme/upload/", {"files": SimpleUploadedFile(f"a{NUL}b.txt", b"Scope.")}, **HTMX)
    assert response.status_code == 200  # Django's parser drops the character from the name
    assert [d.name for d in Document.objects.all()] == ["ab.txt"]


def test_add_document_refuses_a_name_with_a_nul_character(member):
    from beyond_site.workspaces.knowledge import DocumentRefused, add_document
    with pytest.raises(DocumentRefused, match="NUL characters"):
        add_document(Workspace.objects.get(slug="acme"), f"a{NUL}b.txt", b"Scope.")


def multipart(filename: str, content: bytes = b"Scope.") -> tuple[bytes, str]:
    """A raw multipart body (the test client would shorten a long file name itself)."""
    boundary = "fuzzboundary"
    body = (f'--{boundary}\r\nContent-Disposition: form-data; name="files"; filename="{filename}"\r\n'
            f"Content-Type: text/plain\r\n\r\n").encode() + content + f"\r\n--{boundary}--\r\n".encode()
    return body, f"multipart/form-data; boundary={boundary}"


def test_a_file_name_too_long_to_read_gets_a_message(member):
    body, content_type = multipart("n" * 1100 + ".txt")
    response = member.post("/w/acme/upload/", body, content_type=content_type, **HTMX)
    assert response.status_code == 400
    assert "A file name is too long" in response.content.decode()
    assert nothing_stored()


def test_a_file_whose_extension_is_too_long_for_a_file_name_is_answered(member):
    name = "scope." + "é" * 200  # 400 bytes of extension: too long for a temporary file's name
    response = member.post("/w/acme/upload/", {"files": SimpleUploadedFile(name, b"Scope.")}, **HTMX)
    assert response.status_code == 200


@pytest.mark.parametrize("value", ["abc", "²", "9" * 40, "-1"])
def test_a_page_cursor_that_is_not_an_id_is_a_400(member, value):
    conversation = Conversation.objects.create(workspace=Workspace.objects.get(slug="acme"), title="t")
    response = member.get(f"/w/acme/c/{conversation.pk}/", {"before": value})
    assert response.status_code == 400 and b"That is not a valid message." in response.content


# ---------------------------------------------------------------------------- fuzz: no 500, whatever comes in

text = st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=300)
form_value = st.one_of(text, st.sampled_from(["", "0", "1", "-1", "abc", "²", "9" * 30, "\x00", "1\x00"]),
                       st.integers(-2**70, 2**70).map(str))
FUZZ = hypothesis_settings(max_examples=60, deadline=None,
                           suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def assert_handled(response):
    assert response.status_code < 500, (response.status_code, response.content[:500])


@FUZZ
@given(message=text, key=form_value, conversation=form_value, htmx=st.booleans())
def test_fuzz_send_never_answers_500(member, message, key, conversation, htmx):
    data = {"message": message, "idempotency_key": key, "conversation": conversation}
    assert_handled(member.post("/w/acme/send/", data, **(HTMX if htmx else {})))


@FUZZ
@given(name=st.one_of(text, st.text(min_size=900, max_size=1400)), content=st.binary(max_size=2000),
       conversation=form_value, htmx=st.booleans(), raw=st.booleans())
def test_fuzz_upload_never_answers_500(member, name, content, conversation, htmx, raw):
    headers = HTMX if htmx else {}
    try:
        upload = SimpleUploadedFile(name or "x", content)
    except SuspiciousFileOperation:  # the test client itself will not send such a name ("/", "..")
        raw = True
    if raw:  # the name as sent, whatever its length or characters
        body, content_type = multipart(name.replace('"', "").replace("\r", "").replace("\n", ""), content)
        response = member.post("/w/acme/upload/", body, content_type=content_type, **headers)
    else:
        response = member.post("/w/acme/upload/", {"files": upload, "conversation": conversation}, **headers)
    assert_handled(response)


@FUZZ
@given(new=text, edited=text, next_url=form_value, memory=st.one_of(st.integers(-5, 10**6), st.just(None)))
def test_fuzz_memories_never_answer_500(member, new, edited, next_url, memory):
    assert_handled(member.post("/w/acme/memories/", {"text": new, "next": next_url}, **HTMX))
    target = memory if memory is not None else (Memory.objects.values_list("pk", flat=True).first() or 1)
    if target >= 0:
        assert_handled(member.post(f"/w/acme/memories/{target}/", {"text": edited}, **HTMX))
        assert_handled(member.post(f"/w/acme/memories/{target}/delete/", {}, **HTMX))


@FUZZ
@given(before=form_value, chats=form_value, q=form_value)
def test_fuzz_page_parameters_never_answer_500(member, before, chats, q):
    conversation = Conversation.objects.first()
    path = f"/w/acme/c/{conversation.pk}/" if conversation else "/w/acme/"
    assert_handled(member.get(path, {"before": before, "chats": chats}))
    assert_handled(member.get("/w/acme/audit/", {"q": q, "status": chats, "date_from": before, "page": chats}))
