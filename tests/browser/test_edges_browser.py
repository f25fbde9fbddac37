"""Rough edges of a day's use (issue 35), each where it shows, in Chromium: sidebar titles on two
lines with the whole title on hover; the audit pages on a 390 px phone (the top bar's Log out on
screen, the run table's cells on screen, no sideways scroll); dark mode following the system, with
WCAG AA contrast measured on text and badges in both schemes; a navigation that reaches Calibration,
Usage and Admin changes for the roles that may open them; the invitation table's whole words at
1280 px, a copy button for the link and a styled, grammatical welcome; a new workspace's
confirmation on screen and a numbered address when the name's own is taken; the Files "For" list
without deleted conversations and a duplicate upload said to be there already."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import DESKTOP, PHONE, login, no_sideways_scroll, open_page, seeded_server

#: The contrast of each text on its background (composited through transparent ancestors), WCAG 2.
CONTRAST_JS = """(selectors) => {
  function rgba(text) {
    const m = text.match(/rgba?\\(([^)]+)\\)/);
    if (!m) return null;
    const p = m[1].split(/[\\s,\\/]+/).filter(Boolean).map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  }
  function over(top, below) {
    const a = top[3];
    return [0, 1, 2].map(i => top[i] * a + below[i] * (1 - a)).concat([1]);
  }
  function background(el) {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const c = rgba(getComputedStyle(e).backgroundColor);
      if (c && c[3] > 0) { layers.push(c); if (c[3] >= 1) break; }
    }
    let colour = [255, 255, 255, 1];
    for (let i = layers.length - 1; i >= 0; i--) colour = over(layers[i], colour);
    return colour;
  }
  function luminance(c) {
    const [r, g, b] = c.slice(0, 3).map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  }
  const out = [];
  for (const selector of selectors) {
    const els = Array.from(document.querySelectorAll(selector)).filter(e => e.getClientRects().length);
    if (!els.length) { out.push({selector, missing: true}); continue; }
    for (const el of els.slice(0, 3)) {
      const style = getComputedStyle(el);
      const bg = background(el);
      const fg = over(rgba(style.color), bg);
      const [hi, lo] = [luminance(fg), luminance(bg)].sort((a, b) => b - a);
      const size = parseFloat(style.fontSize), bold = parseInt(style.fontWeight) >= 700;
      out.push({selector, ratio: (hi + 0.05) / (lo + 0.05), large: size >= 24 || (bold && size >= 18.66),
                text: el.textContent.trim().slice(0, 30), fg: style.color, bg: 'rgb(' + bg.slice(0, 3).map(Math.round) + ')'});
    }
  }
  return out;
}"""

#: Elements not on the seeded pages, put in to measure their colours (a warning, a halt...).
SAMPLES_CHAT = """() => {
  const box = document.createElement('div');
  box.className = 'run';
  box.innerHTML = '<span class="badge badge--warning" data-sample>Warning</span> <span class="badge badge--halted" data-sample>Halted</span>'
    + ' <span class="badge badge--checked" data-sample>Checked</span> <span class="offline-label" data-sample>Offline</span>'
    + ' <span class="run-state run-state--halted" data-sample>halted</span> <span class="source-state source-state--refused" data-sample>refused</span>'
    + ' <span class="source-state source-state--not-cited" data-sample>not cited</span>'
    + '<ul class="step-warnings"><li data-sample>Fix it before use</li></ul><p class="alert" data-sample>Could not reach the server</p>'
    + '<p class="run-warning" data-sample>Over budget</p><div class="step-halt" data-sample>Halted here</div>';
  document.querySelector('#messages').prepend(box);
}"""
SAMPLES_AUDIT = """() => {
  const box = document.createElement('p');
  box.innerHTML = ['completed', 'halted', 'failed', 'declined', 'cancelled'].map(s => '<span class="audit-status audit-status-' + s + '" data-sample>' + s + '</span>').join(' ')
    + ['passed', 'passed_after_rerender', 'warning', 'halted', 'checked', 'not_released', 'pending'].map(b => ' <span class="audit-badge audit-badge-' + b + '" data-sample>' + b + '</span>').join('')
    + ' <span class="audit-warning" data-sample>warning</span> <span class="audit-halt" data-sample>halt</span> <span class="audit-ok" data-sample>ok</span>';
  document.querySelector('main').prepend(box);
}"""

CHAT_TEXTS = [".topbar-link", ".topbar-user .muted", ".topbar-user .link-button", ".conversations li a",
              '.conversations li a[aria-current="page"]', ".conversation-date", ".new-conversation", ".message-text",
              ".run-who", ".run-state--completed", ".badge--passed", ".badge--passed_after_rerender", ".step-num",
              ".step-content p", ".recap h3", ".export-menu > summary", "button.primary", "#chat-form textarea",
              ".memories-panel h2", "[data-sample]"]
AUDIT_TEXTS = [".topbar-link", "h1", ".audit-count", ".audit-zone", "table.audit-runs th", "table.audit-runs td",
               "table.audit-runs a", ".audit-field", "[data-sample]"]
SETTINGS_TEXTS = [".topbar-link", "h1", "h2", ".settings-members td", ".settings-members th", ".muted", "label",
                  "button.primary", "button.danger", ".settings-invitations td"]


@pytest.fixture(scope="module")
def edges(tmp_path_factory):
    """(base URL, seeded ids) of a server of its own (tests/browser/seed_edges.py)."""
    with seeded_server(tmp_path_factory, "edges") as server:
        yield server


def lines_of(locator) -> int:
    """How many lines the element's text takes on screen."""
    return locator.evaluate("""el => {
      const range = document.createRange(); range.selectNodeContents(el);
      return new Set(Array.from(range.getClientRects()).filter(r => r.width > 0).map(r => Math.round(r.top))).size;
    }""")


def on_screen(page, locator) -> None:
    box = locator.bounding_box()
    size = page.viewport_size
    assert box is not None and box["x"] >= 0 and box["y"] >= 0, box
    assert box["x"] + box["width"] <= size["width"] + 0.5 and box["y"] + box["height"] <= size["height"] + 0.5, (box, size)


def test_sidebar_titles_take_two_lines_and_the_whole_title_on_hover(page, edges, csp_errors):
    base, ids = edges
    page.set_viewport_size(DESKTOP)
    login(page, base, "max")
    page.goto(f"{base}/w/harbour/")
    for title, differs in zip(ids["titles"], ("Hamburg", "Bremen")):
        link = page.locator(".conversations li a", has_text=title[:40]).filter(has_text=differs)
        expect(link).to_have_attribute("title", title)
        shown = link.locator(".conversation-title")
        assert lines_of(shown) >= 2  # wraps instead of ending at about 22 characters
        clamp = shown.bounding_box()
        style = shown.evaluate("el => [parseFloat(getComputedStyle(el).lineHeight), el.scrollHeight > el.clientHeight]")
        assert clamp["height"] <= 2 * style[0] + 1, (clamp, style)  # two lines at most, the rest on hover
        # The words that tell the two apart are within what is shown.
        word = shown.evaluate("""(el, word) => {
          const node = el.firstChild, at = node.textContent.indexOf(word), range = document.createRange();
          range.setStart(node, at); range.setEnd(node, at + word.length);
          return range.getBoundingClientRect().bottom;
        }""", differs)
        assert word <= clamp["y"] + clamp["height"] + 0.5, (differs, word, clamp)
    no_sideways_scroll(page)
    assert csp_errors == []


@pytest.mark.parametrize("user,path", [("aud", "audit/"), ("aud", "audit/runs/{run}/"), ("aud", "audit/changes/"),
                                       ("aud", "audit/usage/"), ("ada", "calibration/"), ("ada", "settings/"),
                                       ("ada", "files/"), ("max", "")])
def test_on_a_phone_the_top_bar_fits_and_the_page_does_not_scroll_sideways(page, edges, user, path, csp_errors):
    base, ids = edges
    page.set_viewport_size(PHONE)
    login(page, base, user)
    page.goto(f"{base}/w/harbour/{path.format(run=ids['runs'][0])}")
    logout = page.get_by_role("button", name="Log out")
    expect(logout).to_be_visible()
    on_screen(page, logout)
    bar = page.evaluate("(() => { const b = document.querySelector('.topbar'); return [b.scrollWidth, b.clientWidth]; })()")
    assert bar[0] <= bar[1], bar
    widths = page.evaluate("[document.scrollingElement.scrollWidth, window.innerWidth]")
    assert widths[0] <= widths[1], widths
    page.locator(".topbar-menu > summary").click()  # the workspace's pages, in the Menu
    menu = page.locator(".topbar-menu ul")
    expect(menu).to_be_visible()
    on_screen(page, menu)
    widths = page.evaluate("[document.scrollingElement.scrollWidth, window.innerWidth]")
    assert widths[0] <= widths[1], widths
    page.keyboard.press("Escape")  # closes as a menu does, the focus back on its button
    expect(menu).to_be_hidden()
    expect(page.locator(".topbar-menu > summary")).to_be_focused()
    page.locator(".topbar-menu > summary").click()
    expect(menu).to_be_visible()
    page.mouse.click(PHONE["width"] / 2, PHONE["height"] - 20)  # a click elsewhere closes it too
    expect(menu).to_be_hidden()
    assert csp_errors == []


@pytest.mark.parametrize("width", [1120, 1000, 721, 600])
def test_between_phone_and_desktop_the_top_bar_fits_too(page, edges, width):
    base, _ = edges
    page.set_viewport_size({"width": width, "height": 800})
    login(page, base, "ada")  # an admin: the most links
    for path in ("", "audit/", "calibration/"):
        page.goto(f"{base}/w/harbour/{path}")
        on_screen(page, page.get_by_role("button", name="Log out"))
        bar = page.evaluate("(() => { const b = document.querySelector('.topbar'); return [b.scrollWidth, b.clientWidth]; })()")
        assert bar[0] <= bar[1], (path, bar)
        no_sideways_scroll(page)


def test_on_a_phone_the_run_table_shows_every_cell_of_a_run(page, edges):
    base, ids = edges
    page.set_viewport_size(PHONE)
    login(page, base, "aud")
    page.goto(f"{base}/w/harbour/audit/")
    headings = page.locator("table.audit-runs thead th").all_inner_texts()
    row = page.locator("table.audit-runs tbody tr").first
    cells = row.locator("td")
    expect(cells).to_have_count(len(headings))
    for n, heading in enumerate(headings):
        cell = cells.nth(n)
        expect(cell).to_be_visible()
        box = cell.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], (heading, box)
        label = cell.evaluate("el => getComputedStyle(el, '::before').content")
        assert label == f'"{heading}"', (n, label, heading)  # each value says which column it is
    expect(cells.nth(headings.index("Task"))).to_contain_text(ids["titles"][1][:40])
    no_sideways_scroll(page)


@pytest.mark.parametrize("role,user,shown,hidden", [
    ("admin", "ada", ["Chat", "Files", "Run history", "Admin changes", "Usage", "Calibration", "Settings"], []),
    ("auditor", "aud", ["Chat", "Files", "Run history", "Admin changes", "Usage"], ["Calibration", "Settings"]),
    ("member", "max", ["Chat", "Files", "Run history"], ["Admin changes", "Usage", "Calibration", "Settings"]),
])
@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_navigation_reaches_the_pages_a_role_may_open(page, edges, role, user, shown, hidden, size):
    base, _ = edges
    page.set_viewport_size(size)
    login(page, base, user)
    page.goto(f"{base}/w/harbour/")
    if size == PHONE:
        page.locator(".topbar-menu > summary").click()
    nav = page.locator(".topbar-nav")
    for label in shown:
        expect(nav.get_by_role("link", name=label, exact=True)).to_be_visible()
    for label in hidden:
        expect(nav.get_by_role("link", name=label, exact=True)).to_have_count(0)
    target = {"admin": ("Calibration", "/calibration/"), "auditor": ("Usage", "/audit/usage/"),
              "member": ("Run history", "/audit/")}[role]
    nav.get_by_role("link", name=target[0], exact=True).click()
    page.wait_for_url(f"{base}/w/harbour{target[1]}")
    expect(page.locator('.topbar-nav a[aria-current="page"]').first).to_have_text(target[0])
    open_page(page, "Chat")
    page.wait_for_url(f"{base}/w/harbour/")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_text_and_badges_meet_wcag_aa_contrast_in_both_schemes(browser, edges, scheme):
    base, ids = edges
    context = browser.new_context(color_scheme=scheme, viewport=DESKTOP)
    page = context.new_page()
    try:
        login(page, base, "ada")
        canvas = page.evaluate("getComputedStyle(document.documentElement).backgroundColor")
        dark = [int(v) for v in re.findall(r"\d+", canvas)[:3]]
        assert (sum(dark) < 100) == (scheme == "dark"), canvas  # the page follows the system's setting
        failures = []
        page.goto(f"{base}/w/harbour/")
        page.locator(".conversations li a").first.click()
        expect(page.locator("[data-run-status]").first).to_have_attribute("data-run-status", "completed")
        page.evaluate(SAMPLES_CHAT)
        failures += below_aa(page, CHAT_TEXTS, "chat")
        page.goto(f"{base}/w/harbour/audit/")
        page.evaluate(SAMPLES_AUDIT)
        failures += below_aa(page, AUDIT_TEXTS, "audit")
        page.goto(f"{base}/w/harbour/audit/runs/{ids['runs'][0]}/")
        failures += below_aa(page, [".audit-facts dt", ".audit-facts dd", ".audit-badge", ".audit-rendered p", "h2"],
                             "run")
        page.goto(f"{base}/w/harbour/settings/")
        failures += below_aa(page, SETTINGS_TEXTS, "settings")
        page.goto(f"{base}/w/harbour/files/")
        failures += below_aa(page, [".files-table td", ".files-table th", ".files-name a", "label", "select"], "files")
        assert failures == [], "\n".join(failures)
    finally:
        context.close()


def below_aa(page, selectors: list[str], where: str) -> list[str]:
    measured = page.evaluate(CONTRAST_JS, selectors)
    missing = [m["selector"] for m in measured if m.get("missing")]
    assert not missing, (where, missing)  # every element measured is on the page
    return [f"{where} {m['selector']} {m['text']!r}: {m['ratio']:.2f} ({m['fg']} on {m['bg']})"
            for m in measured if m["ratio"] < (3 if m["large"] else 4.5)]


def test_invitations_whole_words_a_copy_button_and_a_grammatical_welcome(browser, edges, csp_errors):
    base, _ = edges
    context = browser.new_context(viewport=DESKTOP, permissions=["clipboard-read", "clipboard-write"])
    page = context.new_page()
    page.on("console", lambda m: csp_errors.append(m.text) if "Content Security Policy" in m.text else None)
    try:
        login(page, base, "ada")
        page.goto(f"{base}/w/harbour/settings/")
        rows = page.locator(".settings-invitations tbody tr")
        expect(rows).to_have_count(3)
        for n in range(3):
            assert lines_of(rows.nth(n).locator("td").nth(1)) == 1  # "Member", never "Memb / er"
            assert lines_of(rows.nth(n).locator("button", has_text="Withdraw")) == 1  # never "Withdra / w"
        form = page.locator("form[action$='/settings/invitations/']")
        form.locator("select[name=role]").select_option("auditor")
        form.locator("button[type=submit]").click()
        link = page.locator("#invitation-link")
        expect(link).to_be_visible()
        url = link.input_value()
        copy = page.locator("button[data-copy=field]")
        expect(copy).to_have_text("Copy link")
        copy.click()
        expect(copy).to_have_text("Link copied")
        assert page.evaluate("navigator.clipboard.readText()") == url
        newcomer = browser.new_context(viewport=PHONE).new_page()
        newcomer.goto(url)
        newcomer.fill("input[name=username]", "newton")
        newcomer.fill("input[name=password1]", "correct horse battery staple")
        newcomer.fill("input[name=password2]", "correct horse battery staple")
        newcomer.locator("button", has_text="Create my account").click()
        newcomer.wait_for_url(f"{base}/w/harbour/")
        welcome = newcomer.locator(".page-messages .ok")
        expect(welcome).to_have_text("Welcome to Harbour Logistics GmbH: you are an auditor here.")
        on_screen(newcomer, welcome)
        assert welcome.evaluate("el => getComputedStyle(el).backgroundColor") not in ("rgba(0, 0, 0, 0)", "transparent")
        assert welcome.evaluate("el => parseFloat(getComputedStyle(el).paddingLeft)") > 4
        # The chat still fits the screen below the welcome: no page scroll, the composer area on screen.
        heights = newcomer.evaluate("[document.scrollingElement.scrollHeight, window.innerHeight]")
        assert heights[0] <= heights[1], heights
        newcomer.context.close()
        assert csp_errors == []
    finally:
        context.close()


def test_a_new_workspace_is_confirmed_on_screen_with_a_numbered_address(page, edges):
    base, _ = edges
    page.set_viewport_size(DESKTOP)
    login(page, base, "ada")
    page.goto(f"{base}/workspaces/new/")
    page.fill("input[name=name]", "Harbour")  # its own address, harbour, is taken; none was typed
    page.locator("#new-workspace button[type=submit]").click()
    page.wait_for_url(f"{base}/w/harbour-2/settings/")
    banner = page.locator(".page-messages .ok")
    expect(banner).to_contain_text("Workspace Harbour created at the address harbour-2")
    on_screen(page, banner)
    expect(page.locator(".alert")).to_have_count(0)


def test_files_for_list_and_a_duplicate_upload(page, edges, tmp_path):
    base, ids = edges
    page.set_viewport_size(DESKTOP)
    login(page, base, "max")
    page.goto(f"{base}/w/harbour/files/")
    options = page.locator("#files-target option")
    values = options.evaluate_all("els => els.map(e => e.value)")
    assert str(ids["deleted_conversation"]) not in values
    expect(page.locator("#files-target")).not_to_contain_text("deleted")
    for title in ids["titles"]:  # the live conversations are offered
        expect(page.locator("#files-target")).to_contain_text(title[:40])
    same = tmp_path / "access-policy-v2.md"
    same.write_bytes(b"# Access policy\n\nManagers approve access every six months.\n")
    page.set_input_files("#files-input", str(same))
    page.click(".files-add-form button[type=submit]")
    note = page.locator(".page-messages .note")
    expect(note).to_have_text("access-policy-v2.md has the same content as access-policy.md, already in the library "
                              "(in the whole workspace): nothing was added.")
    expect(page.locator(".page-messages .ok")).to_have_count(0)  # nothing is said to be added
    expect(page.locator("tr[data-file]", has_text="access-policy-v2.md")).to_have_count(0)
    expect(page.locator("tr[data-file]", has_text="access-policy.md")).to_have_count(1)
