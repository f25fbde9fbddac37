"""The workspace's pages in every page's top bar (workspaces/templatetags/workspace_nav.py): each
role is shown exactly the pages it may open (Calibration and Settings to admins, Admin changes and
Usage to admins and auditors), on the chat, the audit pages, the files, calibration and settings,
and every link shown opens (no 403 behind a link)."""
from __future__ import annotations

import re

import pytest

from tests.site.chat_support import client_for, workspace_with

pytestmark = pytest.mark.django_db

ALL = ["Chat", "Files", "Saved tasks", "Run history", "Admin changes", "Usage", "Calibration", "Settings"]
SEEN = {"admin": ALL, "auditor": ["Chat", "Files", "Saved tasks", "Run history", "Admin changes", "Usage"],
        "member": ["Chat", "Files", "Saved tasks", "Run history"]}
NAV = re.compile(r'<ul class="topbar-links">(.*?)</ul>', re.S)
LINK = re.compile(r'<a class="topbar-link" href="([^"]+)"[^>]*?( aria-current="page")?>([^<]+)</a>')


@pytest.fixture
def acme(alice, bob, carol):
    return workspace_with("acme", admin=alice, member=bob, auditor=carol)


def links(html: str) -> list[tuple[str, bool, str]]:
    found = NAV.search(html)
    assert found, "no workspace navigation on the page"
    return [(href, bool(current), label) for href, current, label in LINK.findall(found.group(1))]


@pytest.mark.parametrize("role,user", [("admin", "alice"), ("member", "bob"), ("auditor", "carol")])
def test_each_role_sees_the_pages_it_may_open_and_each_opens(acme, role, user, request):
    client = client_for(request.getfixturevalue(user))
    shown = links(client.get("/w/acme/").content.decode())
    assert [label for _, _, label in shown] == SEEN[role]
    assert [label for _, current, label in shown if current] == ["Chat"]
    for href, _, label in shown:
        page = client.get(href)
        assert page.status_code == 200, (label, href, page.status_code)
        again = links(page.content.decode())
        assert [lbl for _, _, lbl in again] == SEEN[role]  # the same bar on every page
        assert [lbl for _, current, lbl in again if current] == [label]


def test_the_menu_holds_the_same_links(acme, carol):
    html = client_for(carol).get("/w/acme/audit/").content.decode()
    menu = re.search(r'<details class="topbar-menu">(.*?)</details>', html, re.S).group(1)
    assert re.findall(r">([^<>]+)</a>", menu) == SEEN["auditor"]


def test_a_page_outside_any_workspace_has_no_workspace_navigation(alice):
    assert 'class="topbar-nav"' not in client_for(alice).get("/").content.decode()
